// IncrementalAlterConfigs and AlterConfigs on the client listener of a cluster node (main
// thread): each resource's change runs on the active controller, reached through the controller
// channel as ElectLeaders is, one resource after another (each its own metadata batch, so one
// refused resource leaves the others' changes standing, as Kafka answers per resource). The
// request-to-change mapping and the per-resource loop are shared with the controller listener,
// which answers the same APIs forwarded by brokers. The broker answers once the controller has
// committed; its own image may show the change a moment later, as a KRaft broker's does.
import { callActiveController, type ControllerChannel } from '../../cluster/controller_channel.js';
import type { ControllerReply } from '../../cluster/metadata/controller.js';
import type { AlterConfigsRequest as ConfigChangeRequest } from '../../cluster/metadata/config_changes.js';
import {
  AlterConfigsApi, ConfigOperation, IncrementalAlterConfigsApi,
  type AlterConfigsRequest, type AlterConfigsResourceResponse, type AlterConfigsResponse,
  type IncrementalAlterConfigsRequest, type IncrementalAlterConfigsResponse,
} from '../../protocol/apis/alter_configs.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster, permitsTopic } from '../acl_authority.js';
import { handler, type HandlerContext, type Wire } from '../handler.js';

/** Bound on the resources of one request. */
export const MAX_CONFIG_RESOURCES = 1000;
/** How long one request may wait for the controller in all (the APIs carry no timeout). */
export const ALTER_CONFIGS_TIMEOUT_MS = 30_000;

export interface AlterConfigsDeps {
  readonly controller: ControllerChannel;
}

/** One resource's change as the controller takes it. */
export function incrementalChanges(req: IncrementalAlterConfigsRequest): ConfigChangeRequest[] {
  return req.resources.map((r) => ({
    resourceType: r.resourceType, resourceName: r.resourceName, mode: 'incremental', validateOnly: req.validateOnly,
    changes: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })),
  }));
}

export function replacementChanges(req: AlterConfigsRequest): ConfigChangeRequest[] {
  return req.resources.map((r) => ({
    resourceType: r.resourceType, resourceName: r.resourceName, mode: 'replace', validateOnly: req.validateOnly,
    changes: r.configs.map((c) => ({ name: c.name, op: ConfigOperation.SET, value: c.value })),
  }));
}

/**
 * Runs each resource's change in request order and answers per resource: a resource named twice
 * is INVALID_REQUEST (every mention, as Kafka refuses duplicates), and a request over the bound
 * refuses every resource.
 */
export async function alterEach(changes: readonly ConfigChangeRequest[], run: (change: ConfigChangeRequest) => Promise<ControllerReply>): Promise<Wire<AlterConfigsResourceResponse>[]> {
  const seen = new Map<string, number>();
  for (const c of changes) {
    const key = `${c.resourceType}:${c.resourceName}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const out: Wire<AlterConfigsResourceResponse>[] = [];
  for (const c of changes) {
    const base = { resourceType: c.resourceType, resourceName: c.resourceName };
    if (changes.length > MAX_CONFIG_RESOURCES) {
      out.push({ ...base, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: `more than ${MAX_CONFIG_RESOURCES} resources in one request` });
    } else if (seen.get(`${c.resourceType}:${c.resourceName}`)! > 1) {
      out.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'the resource is named more than once' });
    } else {
      try {
        const r = await run(c);
        if (r.kind !== 'alterConfigs') throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `the controller answered an alter-configs request with ${r.kind}`);
        out.push({ ...base, errorCode: r.errorCode, errorMessage: r.message });
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        out.push({ ...base, errorCode: err.code, errorMessage: err.message });
      }
    }
  }
  return out;
}

/** Topic 2, broker 4: the resource types whose ALTER_CONFIGS is checked on the topic or the cluster. */
const RESOURCE_TOPIC = 2;

/**
 * Runs each change the principal may make (ALTER_CONFIGS on the topic, or on the cluster for broker
 * resources) on the active controller; the others are refused with TOPIC or CLUSTER_AUTHORIZATION_FAILED.
 */
function viaController(ctx: HandlerContext, deps: AlterConfigsDeps): (change: ConfigChangeRequest) => Promise<ControllerReply> {
  const deadline = performance.now() + ALTER_CONFIGS_TIMEOUT_MS;
  return async (request) => {
    const topic = request.resourceType === RESOURCE_TOPIC;
    if (topic ? !permitsTopic(ctx.authorizer, AclOperation.ALTER_CONFIGS, request.resourceName) : !permitsCluster(ctx.authorizer, AclOperation.ALTER_CONFIGS)) {
      throw new KafkaError(topic ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.CLUSTER_AUTHORIZATION_FAILED, `not authorized to alter the configs of ${request.resourceName || 'the cluster'}`);
    }
    return callActiveController(deps.controller, { kind: 'alterConfigs', request }, Math.max(1, deadline - performance.now()));
  };
}

export const incrementalAlterConfigsHandler = handler({
  api: IncrementalAlterConfigsApi,
  barrier: true,
  async handle(ctx, req: IncrementalAlterConfigsRequest, deps: AlterConfigsDeps): Promise<Wire<IncrementalAlterConfigsResponse>> {
    return { throttleTimeMs: 0, responses: await alterEach(incrementalChanges(req), viaController(ctx, deps)) };
  },
});

export const alterConfigsHandler = handler({
  api: AlterConfigsApi,
  barrier: true,
  async handle(ctx, req: AlterConfigsRequest, deps: AlterConfigsDeps): Promise<Wire<AlterConfigsResponse>> {
    return { throttleTimeMs: 0, responses: await alterEach(replacementChanges(req), viaController(ctx, deps)) };
  },
});
