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
import type { ProduceItem, PartitionRouter } from '../../actors/partition_router.js';
import type { PartitionLookup } from '../../actors/partition_reconciler.js';
import { isInternalTopic, leadershipOf, type PartitionsView } from '../../cluster/cluster_view.js';
import type { BrokerMetrics } from '../../metrics/metrics.js';
import { leaderEndpoints } from './leader_endpoints.js';
import { CloseConnection, handler, NO_RESPONSE, type HandlerResult, type Wire } from '../handler.js';
import { ProduceApi, type ProduceRequest, type ProduceResponse } from '../../protocol/apis/produce.js';
import type { LeaderIdAndEpoch } from '../../protocol/apis/leader_hints.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import { BatchAttr, BatchField } from '../../protocol/record_batch.js';
import { CompressionCodec } from '../../protocol/records.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';

type PartitionOut = Wire<ProduceResponse['responses'][number]['partitionResponses'][number]>;

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

function partitionOut(index: number, errorCode: number, baseOffset = -1, logAppendTimeMs = -1, logStartOffset = -1, currentLeader = NO_LEADER_HINT): PartitionOut {
  return { index, errorCode, baseOffset, logAppendTimeMs, logStartOffset, recordErrors: [], errorMessage: null, currentLeader };
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

export const produceHandler = handler({
  api: ProduceApi,
  async handle(ctx, req: ProduceRequest, deps: ProduceDeps): Promise<HandlerResult<ProduceResponse>> {
    const { cluster, partitions } = deps;
    const acks = req.acks;
    const items: ProduceItem[] = [];
    const where: Array<[number, number, number]> = []; // item -> [topic index, index in response, partition]
    const leaders = new Set<number>();
    let firstError: number = ErrorCode.NONE;
    const responses = req.topicData.map((t, ti) => {
      const writable = permitsTopic(ctx.authorizer, AclOperation.WRITE, t.name);
      const partitionResponses = t.partitionData.map((p, pi) => {
        const lead = leadershipOf(cluster, t.name, p.index);
        let code: number = ErrorCode.NONE;
        let hint = NO_LEADER_HINT;
        if (acks !== 0 && acks !== 1 && acks !== -1) code = ErrorCode.INVALID_REQUIRED_ACKS;
        else if (req.transactionalId !== null) code = ErrorCode.INVALID_REQUEST;
        else if (!writable) code = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
        else if (lead.kind === 'unknown') code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        else if (isInternalTopic(t.name)) code = ErrorCode.INVALID_TOPIC_EXCEPTION; // only the coordinator writes it
        else if (lead.kind === 'notLeader') {
          code = ErrorCode.NOT_LEADER_OR_FOLLOWER;
          hint = leaderHint(lead, leaders);
        } else if (p.records === null || p.records.length === 0) code = ErrorCode.INVALID_RECORD;
        else if (p.records.length > deps.limits.maxProduceBatchBytes) code = ErrorCode.MESSAGE_TOO_LARGE;
        else if (ctx.version < 7 && p.records.length >= BatchField.attributes + 2 && (p.records.readInt16BE(BatchField.attributes) & BatchAttr.compressionMask) === CompressionCodec.zstd) {
          code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE;
        } else {
          const handle = partitions.handleOf(t.name, p.index);
          if (handle < 0) code = ErrorCode.NOT_LEADER_OR_FOLLOWER;
          else {
            items.push({ handle, records: p.records, leaderEpoch: lead.leaderEpoch });
            where.push([ti, pi, p.index]);
          }
        }
        if (firstError === ErrorCode.NONE) firstError = code;
        return partitionOut(p.index, code, -1, -1, -1, hint);
      });
      return { name: t.name, partitionResponses };
    });
    let records = 0;
    let bytes = 0;
    for (const it of items) {
      bytes += it.records.length;
      records += claimedRecordCount(it.records);
    }
    deps.metrics.addMessagesIn(records);
    deps.metrics.addBytesIn(bytes);
    const outcomes = await deps.router.produce(items, req.timeoutMs, acks, ctx.requestFrame ?? null);
    if (acks === 0) {
      // No response exists to carry the error, so Kafka closes the connection; the client then
      // refreshes metadata and learns what went wrong (after the handover, so from a view that
      // shows the new leader everywhere).
      const code = firstError !== ErrorCode.NONE ? firstError : (outcomes.find((o) => o.errorCode !== 0)?.errorCode ?? ErrorCode.NONE);
      if (code === ErrorCode.NONE) return NO_RESPONSE;
      await deps.handover();
      return new CloseConnection('acks0-error', `acks=0 produce failed with ${errorName(code)}`);
    }
    outcomes.forEach((o, i) => {
      const [ti, pi, partition] = where[i]!;
      let hint = NO_LEADER_HINT;
      if (o.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
        const lead = leadershipOf(cluster, req.topicData[ti]!.name, partition);
        if (lead.kind === 'notLeader') hint = leaderHint(lead, leaders);
      }
      responses[ti]!.partitionResponses[pi] = partitionOut(partition, o.errorCode, o.baseOffset, o.logAppendTime, o.logStartOffset, hint);
    });
    // A client sent to another leader before this broker's handover is granted could reach one
    // that has not applied its leadership yet, and be refused a second time.
    const handover = leaders.size > 0 ? deps.handover() : null;
    if (handover !== null) await handover;
    return { responses, throttleTimeMs: 0, nodeEndpoints: leaderEndpoints(cluster, leaders) };
  },
});
