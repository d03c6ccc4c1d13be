// AlterPartitionReassignments and ListPartitionReassignments (KIP-455) on the client listener of
// a cluster node (main thread): both run on the active controller, reached through the controller
// channel as ElectLeaders is. The wire shapes are shared with the controller listener, which
// answers them when brokers forward them, and with the controller client that forwards them.
import { callActiveController, type ControllerChannel } from '../../cluster/controller_channel.js';
import type { ControllerReply, TopicPartitions } from '../../cluster/metadata/controller.js';
import type { OngoingReassignment, ReassignmentResult, ReassignmentTopic } from '../../cluster/metadata/replication_control.js';
import {
  AlterPartitionReassignmentsApi, type AlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsResponse,
} from '../../protocol/apis/alter_partition_reassignments.js';
import {
  ListPartitionReassignmentsApi, type ListPartitionReassignmentsRequest, type ListPartitionReassignmentsResponse,
} from '../../protocol/apis/list_partition_reassignments.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';

/** Bound on how long one request may wait for the controller. */
export const MAX_REASSIGNMENT_TIMEOUT_MS = 300_000;

export interface PartitionReassignmentsDeps {
  readonly controller: ControllerChannel;
}

type Reply<K extends ControllerReply['kind']> = Extract<ControllerReply, { kind: K }>;

function clampTimeout(ms: number): number {
  return Math.min(MAX_REASSIGNMENT_TIMEOUT_MS, Math.max(1, ms));
}

function expect<K extends ControllerReply['kind']>(r: ControllerReply, kind: K): Reply<K> {
  if (r.kind !== kind) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `the controller answered ${kind} with ${r.kind}`);
  return r as Reply<K>;
}

// ---- AlterPartitionReassignments ----

export function reassignmentTopics(req: AlterPartitionReassignmentsRequest): ReassignmentTopic[] {
  return req.topics.map((t) => ({ topic: t.name, partitions: t.partitions.map((p) => ({ partition: p.partitionIndex, replicas: p.replicas })) }));
}

function reassignmentResponse(errorCode: ErrorCode, message: string | null, results: readonly ReassignmentResult[]): Wire<AlterPartitionReassignmentsResponse> {
  const byTopic = new Map<string, AlterPartitionReassignmentsResponse['responses'][number]>();
  for (const r of results) {
    let t = byTopic.get(r.topic);
    if (t === undefined) byTopic.set(r.topic, (t = { name: r.topic, partitions: [] }));
    t.partitions.push({ partitionIndex: r.partition, errorCode: r.errorCode, errorMessage: r.message });
  }
  return { throttleTimeMs: 0, errorCode, errorMessage: message, responses: [...byTopic.values()] };
}

/** A request refused whole: the code at the top and on every named partition. */
export function refusedReassignments(req: AlterPartitionReassignmentsRequest, code: ErrorCode, message: string | null): Wire<AlterPartitionReassignmentsResponse> {
  const results = req.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, errorCode: code, message })));
  return reassignmentResponse(code, message, results);
}

/** The answer to `req` from the controller's reply. */
export function reassignmentAnswer(req: AlterPartitionReassignmentsRequest, reply: ControllerReply): Wire<AlterPartitionReassignmentsResponse> {
  const r = expect(reply, 'alterPartitionReassignments');
  return r.errorCode !== ErrorCode.NONE ? refusedReassignments(req, r.errorCode, r.message) : reassignmentResponse(ErrorCode.NONE, null, r.results);
}

/** The controller's reply as a forwarded request's wire answer carries it back. */
export function reassignmentReply(res: AlterPartitionReassignmentsResponse): ControllerReply {
  return {
    kind: 'alterPartitionReassignments', errorCode: res.errorCode as ErrorCode, message: res.errorMessage,
    results: res.responses.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, errorCode: p.errorCode as ErrorCode, message: p.errorMessage }))),
  };
}

export const alterPartitionReassignmentsHandler = handler({
  api: AlterPartitionReassignmentsApi,
  barrier: true,
  async handle(ctx, req: AlterPartitionReassignmentsRequest, deps: PartitionReassignmentsDeps): Promise<Wire<AlterPartitionReassignmentsResponse>> {
    if (!permitsCluster(ctx.authorizer, AclOperation.ALTER)) return refusedReassignments(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'not authorized on the cluster');
    try {
      const r = await callActiveController(deps.controller, { kind: 'alterPartitionReassignments', topics: reassignmentTopics(req) }, clampTimeout(req.timeoutMs));
      return reassignmentAnswer(req, r);
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return refusedReassignments(req, err.code, err.message);
    }
  },
});

// ---- ListPartitionReassignments ----

export function listingTopics(req: ListPartitionReassignmentsRequest): TopicPartitions {
  return req.topics?.map((t) => ({ topic: t.name, partitions: t.partitionIndexes })) ?? null;
}

export function refusedListing(code: ErrorCode, message: string | null): Wire<ListPartitionReassignmentsResponse> {
  return { throttleTimeMs: 0, errorCode: code, errorMessage: message, topics: [] };
}

/** The answer from the controller's reply: the ongoing reassignments grouped by topic. */
export function listingAnswer(reply: ControllerReply): Wire<ListPartitionReassignmentsResponse> {
  const r = expect(reply, 'listPartitionReassignments');
  if (r.errorCode !== ErrorCode.NONE) return refusedListing(r.errorCode, r.message);
  const byTopic = new Map<string, ListPartitionReassignmentsResponse['topics'][number]>();
  for (const o of r.reassignments) {
    let t = byTopic.get(o.topic);
    if (t === undefined) byTopic.set(o.topic, (t = { name: o.topic, partitions: [] }));
    t.partitions.push({ partitionIndex: o.partition, replicas: [...o.replicas], addingReplicas: [...o.addingReplicas], removingReplicas: [...o.removingReplicas] });
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics: [...byTopic.values()] };
}

export function listingReply(res: ListPartitionReassignmentsResponse): ControllerReply {
  return {
    kind: 'listPartitionReassignments', errorCode: res.errorCode as ErrorCode, message: res.errorMessage,
    reassignments: res.topics.flatMap((t) => t.partitions.map((p): OngoingReassignment => ({
      topic: t.name, partition: p.partitionIndex, replicas: p.replicas, addingReplicas: p.addingReplicas, removingReplicas: p.removingReplicas,
    }))),
  };
}

export const listPartitionReassignmentsHandler = handler({
  api: ListPartitionReassignmentsApi,
  async handle(ctx, req: ListPartitionReassignmentsRequest, deps: PartitionReassignmentsDeps): Promise<Wire<ListPartitionReassignmentsResponse>> {
    if (!permitsCluster(ctx.authorizer, AclOperation.DESCRIBE)) return refusedListing(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'not authorized on the cluster');
    try {
      return listingAnswer(await callActiveController(deps.controller, { kind: 'listPartitionReassignments', topics: listingTopics(req) }, clampTimeout(req.timeoutMs)));
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return refusedListing(err.code, err.message);
    }
  },
});
