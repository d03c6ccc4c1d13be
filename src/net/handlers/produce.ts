// Produce: routes each partition's record batch to its owning shard through the rings and
// answers once every partition's acks condition holds. Batch validation, idempotence checks
// and offset assignment happen on the shard; here only what needs no record bytes is checked,
// and that this broker leads the partition: if not, NOT_LEADER_OR_FOLLOWER carries the leader
// the cluster view knows (KIP-951: currentLeader, and the leader's endpoint from v10). The view's
// leader epoch travels with each batch: the partition stamps it into the batch as Kafka's leader
// does. Produce has no current_leader_epoch field, so clients are not fenced here. A partition
// whose leadership moved while its batch was on the way is refused by its actor; its answer then
// takes the hint from the view as it is by then, as Kafka's answers read the metadata cache when
// they are made. A topic the client may not WRITE is answered TOPIC_AUTHORIZATION_FAILED.
import type { ProduceItem, ProduceOutcome, PartitionRouter } from '../../actors/partition_router.js';
import type { PartitionLookup } from '../../actors/partition_reconciler.js';
import { isInternalTopic, leadershipOf, type PartitionsView } from '../../cluster/cluster_view.js';
import type { BrokerMetrics } from '../../metrics/metrics.js';
import { leaderEndpoints } from './leader_endpoints.js';
import { CloseConnection, handler, NO_RESPONSE, type HandlerResult, type Wire } from '../handler.js';
import { ProduceApi, type ProduceRequest, type ProduceResponse } from '../../protocol/apis/produce.js';
import type { LeaderIdAndEpoch, NodeEndpoint } from '../../protocol/apis/leader_hints.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import { BatchAttr, BatchField } from '../../protocol/record_batch.js';
import { CompressionCodec } from '../../protocol/records.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';

/** One partition's answer; a routed partition's is filled in once its outcome is known. */
interface PartitionOut {
  index: number;
  errorCode: number;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  recordErrors: never[];
  errorMessage: null;
  currentLeader: LeaderIdAndEpoch;
}

export interface ProduceDeps {
  readonly cluster: PartitionsView;
  readonly partitions: PartitionLookup;
  readonly router: Pick<PartitionRouter, 'produce'>;
  readonly metrics: Pick<BrokerMetrics, 'addMessagesIn' | 'addBytesIn'>;
  readonly limits: {
    /** The largest record batch a shard's inbound ring carries in one produce message. */
    readonly maxProduceBatchBytes: number;
  };
  /**
   * While this broker hands its leaderships over (controlled shutdown): settles once the
   * controller let it go, which it does only after every other broker applied the move. Null
   * otherwise. A client told of a moved partition before then could reach a new leader that has
   * not applied its leadership yet, and be refused a second time.
   */
  readonly handover: () => Promise<unknown> | null;
}

const NO_LEADER_HINT: LeaderIdAndEpoch = { leaderId: -1, leaderEpoch: -1 };
const NO_ENDPOINTS: NodeEndpoint[] = [];
Object.freeze(NO_ENDPOINTS);
/** Shared by every answer (frozen): Sluice refuses a batch whole, so it never names single records. */
const NO_RECORD_ERRORS: never[] = [];
Object.freeze(NO_RECORD_ERRORS);

function partitionOut(index: number, errorCode: number, currentLeader: LeaderIdAndEpoch): PartitionOut {
  return { index, errorCode, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: NO_RECORD_ERRORS, errorMessage: null, currentLeader };
}

/** The KIP-951 hint naming the leader the view knows; a known leader joins `leaders` for its endpoint. */
function leaderHint(lead: { readonly leaderId: number; readonly leaderEpoch: number }, leaders: Set<number>): LeaderIdAndEpoch {
  if (lead.leaderId >= 0) leaders.add(lead.leaderId);
  return { leaderId: lead.leaderId, leaderEpoch: lead.leaderEpoch };
}

/**
 * The record count a batch header claims, for the messages-in metric. The bytes are the client's
 * and unvalidated here (the shard checks the batch): anything that is not a magic-2 header with a
 * non-negative count counts 0, since prom-client throws on a negative increment.
 */
export function claimedRecordCount(records: Buffer): number {
  if (records.length < BatchField.recordsCount + 4 || records[BatchField.magic] !== 2) return 0;
  return Math.max(0, records.readInt32BE(BatchField.recordsCount));
}

/** The error every partition of a request gets regardless of its topic, or NONE. */
function requestRefusal(req: ProduceRequest): number {
  if (req.acks !== 0 && req.acks !== 1 && req.acks !== -1) return ErrorCode.INVALID_REQUIRED_ACKS;
  if (req.transactionalId !== null) return ErrorCode.INVALID_REQUEST;
  return ErrorCode.NONE;
}

/** A partition routed to its shard, with the answer its outcome fills in. */
interface RoutedPartition extends ProduceItem {
  readonly topic: string;
  readonly out: PartitionOut;
}

/** What a request's answer needs besides the outcomes of its routed partitions. */
interface Routed {
  readonly req: ProduceRequest;
  readonly deps: ProduceDeps;
  readonly items: readonly RoutedPartition[];
  readonly responses: Wire<ProduceResponse>['responses'];
  /** The first refusal made before routing, or NONE. */
  readonly firstError: number;
  /** Leaders named in hints so far; null while none is. */
  leaders: Set<number> | null;
}

// Allocation on this path is per request at up to tens of thousands of requests a second
// (an await, a grown array or a tuple each cost more than the rest of the handler's objects), so
// the handler is not async: it routes, and answers in one continuation of the router's promise.
// Each partition's answer is built once; a routed one is filled in from its outcome.
export const produceHandler = handler({
  api: ProduceApi,
  handle(ctx, req: ProduceRequest, deps: ProduceDeps): Promise<HandlerResult<ProduceResponse>> {
    const { cluster, partitions } = deps;
    const refusal = requestRefusal(req);
    let asked = 0;
    for (const t of req.topicData) asked += t.partitionData.length;
    const items: RoutedPartition[] = new Array(asked); // cut to those routed: cheaper than growing from empty
    let routedCount = 0;
    let leaders: Set<number> | null = null;
    let firstError: number = ErrorCode.NONE;
    let bytes = 0;
    let records = 0;
    const responses: Wire<ProduceResponse>['responses'] = new Array(req.topicData.length);
    for (let ti = 0; ti < req.topicData.length; ti++) {
      const t = req.topicData[ti]!;
      const writable = permitsTopic(ctx.authorizer, AclOperation.WRITE, t.name);
      const partitionResponses: PartitionOut[] = new Array(t.partitionData.length);
      for (let pi = 0; pi < t.partitionData.length; pi++) {
        const p = t.partitionData[pi]!;
        const lead = leadershipOf(cluster, t.name, p.index);
        let code: number = ErrorCode.NONE;
        let hint = NO_LEADER_HINT;
        let handle = -1;
        let batch: Buffer | null = null; // the records routed, once every check passed
        let leaderEpoch = -1;
        if (refusal !== ErrorCode.NONE) code = refusal;
        else if (!writable) code = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
        else if (lead.kind === 'unknown') code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        else if (isInternalTopic(t.name)) code = ErrorCode.INVALID_TOPIC_EXCEPTION; // only the coordinator writes it
        else if (lead.kind === 'notLeader') {
          code = ErrorCode.NOT_LEADER_OR_FOLLOWER;
          hint = leaderHint(lead, (leaders ??= new Set()));
        } else if (p.records === null || p.records.length === 0) code = ErrorCode.INVALID_RECORD;
        else if (p.records.length > deps.limits.maxProduceBatchBytes) code = ErrorCode.MESSAGE_TOO_LARGE;
        else if (ctx.version < 7 && p.records.length >= BatchField.attributes + 2 && (p.records.readInt16BE(BatchField.attributes) & BatchAttr.compressionMask) === CompressionCodec.zstd) {
          code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE;
        } else {
          handle = partitions.handleOf(t.name, p.index);
          if (handle < 0) code = ErrorCode.NOT_LEADER_OR_FOLLOWER;
          else {
            batch = p.records;
            leaderEpoch = lead.leaderEpoch;
          }
        }
        const out = partitionOut(p.index, code, hint);
        partitionResponses[pi] = out;
        if (batch !== null) {
          items[routedCount++] = { handle, records: batch, leaderEpoch, topic: t.name, out };
          bytes += batch.length;
          records += claimedRecordCount(batch);
        } else if (firstError === ErrorCode.NONE) firstError = code;
      }
      responses[ti] = { name: t.name, partitionResponses };
    }
    items.length = routedCount;
    deps.metrics.addMessagesIn(records);
    deps.metrics.addBytesIn(bytes);
    const routed: Routed = { req, deps, items, responses, firstError, leaders };
    return deps.router.produce(items, req.timeoutMs, req.acks, ctx.requestFrame ?? null).then((outcomes) => answer(routed, outcomes));
  },
});

function answer(routed: Routed, outcomes: readonly ProduceOutcome[]): HandlerResult<ProduceResponse> | Promise<HandlerResult<ProduceResponse>> {
  const { req, deps } = routed;
  if (req.acks === 0) {
    // No response exists to carry the error, so Kafka closes the connection; the client then
    // refreshes metadata and learns what went wrong (after the handover, so from a view that
    // shows the new leader everywhere).
    const code = routed.firstError !== ErrorCode.NONE ? routed.firstError : (outcomes.find((o) => o.errorCode !== 0)?.errorCode ?? ErrorCode.NONE);
    if (code === ErrorCode.NONE) return NO_RESPONSE;
    return Promise.resolve(deps.handover()).then(() => new CloseConnection('acks0-error', `acks=0 produce failed with ${errorName(code)}`));
  }
  for (let i = 0; i < outcomes.length; i++) {
    const o = outcomes[i]!;
    const { out, topic } = routed.items[i]!;
    out.errorCode = o.errorCode;
    out.baseOffset = o.baseOffset;
    out.logAppendTimeMs = o.logAppendTime;
    out.logStartOffset = o.logStartOffset;
    if (o.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
      const lead = leadershipOf(deps.cluster, topic, out.index);
      if (lead.kind === 'notLeader') out.currentLeader = leaderHint(lead, (routed.leaders ??= new Set()));
    }
  }
  const leaders = routed.leaders;
  const hinted = leaders !== null && leaders.size > 0;
  const response = { responses: routed.responses, throttleTimeMs: 0, nodeEndpoints: hinted ? leaderEndpoints(deps.cluster, leaders) : NO_ENDPOINTS };
  if (!hinted) return response;
  // A client sent to another leader before this broker's handover is granted could reach one
  // that has not applied its leadership yet, and be refused a second time.
  const handover = deps.handover();
  return handover === null ? response : handover.then(() => response);
}
