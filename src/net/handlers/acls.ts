// DescribeAcls, CreateAcls and DeleteAcls (APIs 29/30/31), main thread. Describe reads the local
// metadata image and needs DESCRIBE on the cluster; Create and Delete need ALTER on the cluster and
// run on the active controller (through the controller channel on a client listener, on the quorum
// itself on the controller listener, which answers a request a broker forwarded); a client
// listener answers once its own image shows the change, so the next request is checked against it.
import type { ControllerReply } from '../../cluster/metadata/controller.js';
import type { AclCreation } from '../../cluster/metadata/acl_changes.js';
import type { MetadataImage } from '../../cluster/metadata/image.js';
import {
  AclOperation, bindingKey, checkFilter, filterMatches, validBinding, type AclBinding, type AclFilter,
} from '../../coordinator/acl/acl.js';
import {
  CreateAclsApi, DeleteAclsApi, DescribeAclsApi,
  type AclCreationWire, type AclFilterWire, type CreateAclsRequest, type CreateAclsResponse, type DeleteAclsMatchingAcl, type DeleteAclsRequest, type DeleteAclsResponse,
  type DescribeAclsRequest, type DescribeAclsResource, type DescribeAclsResponse,
} from '../../protocol/apis/acls.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { permitsCluster } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';

/** How long a change may wait for the controller and then for the local image. */
export const ALTER_ACLS_TIMEOUT_MS = 30_000;

export function filterOf(w: AclFilterWire): AclFilter {
  return {
    resourceType: w.resourceTypeFilter, resourceName: w.resourceNameFilter, patternType: w.patternTypeFilter,
    principal: w.principalFilter, host: w.hostFilter, operation: w.operation, permission: w.permissionType,
  };
}

export function filterWire(f: AclFilter): AclFilterWire {
  return {
    resourceTypeFilter: f.resourceType, resourceNameFilter: f.resourceName, patternTypeFilter: f.patternType,
    principalFilter: f.principal, hostFilter: f.host, operation: f.operation, permissionType: f.permission,
  };
}

export function creationOf(c: AclCreationWire): AclCreation {
  return {
    resourceType: c.resourceType, resourceName: c.resourceName, patternType: c.resourcePatternType, principal: c.principal,
    host: c.host, operation: c.operation, permission: c.permissionType,
  };
}

export function creationWire(c: AclCreation): AclCreationWire {
  return {
    resourceType: c.resourceType, resourceName: c.resourceName, resourcePatternType: c.patternType, principal: c.principal,
    host: c.host, operation: c.operation, permissionType: c.permission,
  };
}

/** A binding DeleteAcls answered as matching, checked. */
export function matchedBinding(m: DeleteAclsMatchingAcl): AclBinding {
  return validBinding({ ...m, permission: m.permissionType });
}

const DENIED = 'not authorized on the cluster';

export interface DescribeAclsDeps {
  readonly image: () => MetadataImage;
}

export const describeAclsHandler = handler({
  api: DescribeAclsApi,
  handle(ctx, req: DescribeAclsRequest, deps: DescribeAclsDeps): Wire<DescribeAclsResponse> {
    const refuse = (errorCode: ErrorCode, errorMessage: string): Wire<DescribeAclsResponse> => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] });
    if (!permitsCluster(ctx.authorizer, AclOperation.DESCRIBE)) return refuse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, DENIED);
    const filter = filterOf(req);
    try {
      checkFilter(filter);
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return refuse(err.code, err.message);
    }
    const byPattern = new Map<string, DescribeAclsResource>();
    for (const acl of deps.image().acls.values()) {
      if (!filterMatches(filter, acl)) continue;
      const key = JSON.stringify([acl.resourceType, acl.resourceName, acl.patternType]);
      let r = byPattern.get(key);
      if (r === undefined) byPattern.set(key, r = { resourceType: acl.resourceType, resourceName: acl.resourceName, patternType: acl.patternType, acls: [] });
      r.acls.push({ principal: acl.principal, host: acl.host, operation: acl.operation, permissionType: acl.permission });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, resources: [...byPattern.values()] };
  },
});

export interface AlterAclsDeps {
  /** Runs CreateAcls on the active controller. */
  readonly create: (creations: readonly AclCreation[], timeoutMs: number) => Promise<ControllerReply>;
  /** Runs DeleteAcls on the active controller. */
  readonly delete: (filters: readonly AclFilter[], timeoutMs: number) => Promise<ControllerReply>;
  /** Resolves once the local image satisfies `holds` (or rejects after `timeoutMs`); absent on the controller listener. */
  readonly applied?: (holds: (image: MetadataImage) => boolean, timeoutMs: number) => Promise<void>;
}

/** The controller's reply to `run`, then the local image caught up with what `shows` checks; a KafkaError on the way is thrown. */
async function alterOnController<K extends 'createAcls' | 'deleteAcls'>(
  kind: K, deps: AlterAclsDeps, run: (timeoutMs: number) => Promise<ControllerReply>, shows: (reply: Extract<ControllerReply, { kind: K }>, image: MetadataImage) => boolean,
): Promise<Extract<ControllerReply, { kind: K }>> {
  const deadline = performance.now() + ALTER_ACLS_TIMEOUT_MS;
  const reply = await run(ALTER_ACLS_TIMEOUT_MS);
  if (reply.kind !== kind) throw new Error(`controller answered ${reply.kind} to a ${kind} request`);
  const mine = reply as Extract<ControllerReply, { kind: K }>;
  const { errorCode, message } = mine as { readonly errorCode: ErrorCode; readonly message: string | null };
  if (errorCode !== ErrorCode.NONE) throw new KafkaError(errorCode, message ?? '');
  if (deps.applied !== undefined) await deps.applied((image) => shows(mine, image), Math.max(1, deadline - performance.now()));
  return mine;
}

export const createAclsHandler = handler({
  api: CreateAclsApi,
  barrier: true,
  async handle(ctx, req: CreateAclsRequest, deps: AlterAclsDeps): Promise<Wire<CreateAclsResponse>> {
    const refuseAll = (errorCode: ErrorCode, errorMessage: string): Wire<CreateAclsResponse> => ({ throttleTimeMs: 0, results: req.creations.map(() => ({ errorCode, errorMessage })) });
    if (!permitsCluster(ctx.authorizer, AclOperation.ALTER)) return refuseAll(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, DENIED);
    const creations = req.creations.map(creationOf);
    try {
      const reply = await alterOnController('createAcls', deps, (t) => deps.create(creations, t), (r, image) => {
        const present = new Set([...image.acls.values()].map(bindingKey));
        return creations.every((c, i) => r.results[i]?.errorCode !== ErrorCode.NONE || present.has(bindingKey(c)));
      });
      return { throttleTimeMs: 0, results: reply.results.map((r) => ({ errorCode: r.errorCode, errorMessage: r.message })) };
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return refuseAll(err.code, err.message);
    }
  },
});

export const deleteAclsHandler = handler({
  api: DeleteAclsApi,
  barrier: true,
  async handle(ctx, req: DeleteAclsRequest, deps: AlterAclsDeps): Promise<Wire<DeleteAclsResponse>> {
    const refuseAll = (errorCode: ErrorCode, errorMessage: string): Wire<DeleteAclsResponse> => ({
      throttleTimeMs: 0, filterResults: req.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
    });
    if (!permitsCluster(ctx.authorizer, AclOperation.ALTER)) return refuseAll(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, DENIED);
    try {
      const reply = await alterOnController('deleteAcls', deps, (t) => deps.delete(req.filters.map(filterOf), t), (r, image) => {
        const present = new Set([...image.acls.values()].map(bindingKey));
        return r.results.every((f) => f.removed.every((acl) => !present.has(bindingKey(acl))));
      });
      return {
        throttleTimeMs: 0,
        filterResults: reply.results.map((f) => ({
          errorCode: f.errorCode, errorMessage: f.message,
          matchingAcls: f.removed.map((acl) => ({
            errorCode: ErrorCode.NONE, errorMessage: null, resourceType: acl.resourceType, resourceName: acl.resourceName,
            patternType: acl.patternType, principal: acl.principal, host: acl.host, operation: acl.operation, permissionType: acl.permission,
          })),
        })),
      };
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return refuseAll(err.code, err.message);
    }
  },
});
