// Produce: routes each partition's record batch to its owning shard through the rings and
// answers once every partition's acks condition holds. Batch validation, idempotence checks
// and offset assignment happen on the shard; here only what needs no record bytes is checked.
import type { ProduceItem } from '../../actors/partition_router.js';
import { isInternalTopic } from '../../actors/topic_manager.js';
import { PRODUCE_HEADER_BYTES } from '../../actors/ring_messages.js';
import { CloseConnection, handler, NO_RESPONSE, type HandlerResult, type Wire } from '../handler.js';
import { ProduceApi, type ProduceRequest, type ProduceResponse } from '../../protocol/apis/produce.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import { BatchAttr, BatchField } from '../../protocol/record_batch.js';
import { CompressionCodec } from '../../protocol/records.js';

type PartitionOut = Wire<ProduceResponse['responses'][number]['partitionResponses'][number]>;

const NO_LEADER_HINT = { leaderId: -1, leaderEpoch: -1 };

function partitionOut(index: number, errorCode: number, baseOffset = -1, logAppendTimeMs = -1, logStartOffset = -1): PartitionOut {
  return { index, errorCode, baseOffset, logAppendTimeMs, logStartOffset, recordErrors: [], errorMessage: null, currentLeader: NO_LEADER_HINT };
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
  async handle(ctx, req: ProduceRequest): Promise<HandlerResult<ProduceResponse>> {
    const b = ctx.broker;
    const acks = req.acks;
    const ringLimit = b.router.host(0).toShard.maxMessageBytes - PRODUCE_HEADER_BYTES;
    const items: ProduceItem[] = [];
    const where: Array<[number, number, number]> = []; // item -> [topic index, index in response, partition]
    let firstError: number = ErrorCode.NONE;
    const responses = req.topicData.map((t, ti) => {
      const topic = b.topics.table.get(t.name);
      const partitionResponses = t.partitionData.map((p, pi) => {
        let code: number = ErrorCode.NONE;
        if (acks !== 0 && acks !== 1 && acks !== -1) code = ErrorCode.INVALID_REQUIRED_ACKS;
        else if (req.transactionalId !== null) code = ErrorCode.INVALID_REQUEST;
        else if (!topic || p.index < 0 || p.index >= topic.partitions) code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        else if (isInternalTopic(t.name)) code = ErrorCode.INVALID_TOPIC_EXCEPTION; // only the coordinator writes it
        else if (p.records === null || p.records.length === 0) code = ErrorCode.INVALID_RECORD;
        else if (p.records.length > ringLimit) code = ErrorCode.MESSAGE_TOO_LARGE;
        else if (ctx.version < 7 && p.records.length >= BatchField.attributes + 2 && (p.records.readInt16BE(BatchField.attributes) & BatchAttr.compressionMask) === CompressionCodec.zstd) {
          code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE;
        } else {
          const handle = b.topics.handle(t.name, p.index);
          if (handle < 0) code = ErrorCode.NOT_LEADER_OR_FOLLOWER;
          else {
            items.push({ handle, records: p.records });
            where.push([ti, pi, p.index]);
          }
        }
        if (firstError === ErrorCode.NONE) firstError = code;
        return partitionOut(p.index, code);
      });
      return { name: t.name, partitionResponses };
    });
    let records = 0;
    let bytes = 0;
    for (const it of items) {
      bytes += it.records.length;
      records += claimedRecordCount(it.records);
    }
    b.metrics.addMessagesIn(records);
    b.metrics.addBytesIn(bytes);
    const outcomes = await b.router.produce(items, req.timeoutMs);
    if (acks === 0) {
      // No response exists to carry the error, so Kafka closes the connection; the client then
      // refreshes metadata and learns what went wrong.
      const code = firstError !== ErrorCode.NONE ? firstError : (outcomes.find((o) => o.errorCode !== 0)?.errorCode ?? ErrorCode.NONE);
      return code === ErrorCode.NONE ? NO_RESPONSE : new CloseConnection('acks0-error', `acks=0 produce failed with ${errorName(code)}`);
    }
    outcomes.forEach((o, i) => {
      const [ti, pi, partition] = where[i]!;
      responses[ti]!.partitionResponses[pi] = partitionOut(partition, o.errorCode, o.baseOffset, o.logAppendTime, o.logStartOffset);
    });
    return { responses, throttleTimeMs: 0 };
  },
});
