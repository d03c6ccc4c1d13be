// Raw Produce wire pieces for the load generators (bench driver, main thread): a Produce request
// frame built once per in-flight slot (only its correlation id, and for latency runs the stamped
// values, change between sends), a splitter for the broker's response byte stream, and the check
// of one Produce response. Going around KafkaConnection keeps the client's per-request cost to
// one int32 write and one small decode, so on a 2-core machine the broker gets the CPU.
// Invariants: a slot's frame is rewritten only after its previous response arrived (so the
// kernel has long copied it); the splitter holds at most one partial frame of <= maxFrame bytes.
import { ProduceApi } from '../../protocol/apis/produce.js';
import { readResponseHeader, writeRequestHeader } from '../../protocol/header.js';
import { Reader } from '../../protocol/reader.js';
import { Writer } from '../../protocol/writer.js';

/** Size prefix (4), apiKey (2), apiVersion (2): the correlation id follows. */
export const CORRELATION_ID_AT = 8;

export interface ProduceFrameSpec {
  readonly version: number;
  readonly clientId: string;
  readonly topic: string;
  readonly partition: number;
  readonly acks: number;
  readonly timeoutMs: number;
  readonly batch: Buffer;
}

export interface ProduceFrame {
  readonly frame: Buffer;
  /** Where the batch starts inside `frame`. */
  readonly batchAt: number;
}

/** One complete Produce request frame (size prefix included) carrying one batch for one partition. */
export function buildProduceFrame(spec: ProduceFrameSpec): ProduceFrame {
  const w = new Writer(spec.batch.length + 256);
  const sizeAt = w.reserveInt32();
  writeRequestHeader(w, { apiKey: ProduceApi.key, apiVersion: spec.version, correlationId: 0, clientId: spec.clientId },
    ProduceApi.isFlexible(spec.version));
  ProduceApi.encodeRequest(spec.version, {
    transactionalId: null,
    acks: spec.acks,
    timeoutMs: spec.timeoutMs,
    topicData: [{ name: spec.topic, partitionData: [{ index: spec.partition, records: spec.batch }] }],
  }, w);
  w.setInt32(sizeAt, w.length - 4);
  const frame = Buffer.concat(w.finish());
  const batchAt = frame.indexOf(spec.batch);
  if (batchAt < 0) throw new Error('produce frame does not contain its batch');
  return { frame, batchAt };
}

/** Splits the response stream into frames (without the size prefix). */
export class FrameSplitter {
  private pending: Buffer | null = null;

  constructor(private readonly maxFrame: number) {}

  push(data: Buffer, onFrame: (frame: Buffer) => void): void {
    let buf = this.pending === null ? data : Buffer.concat([this.pending, data]);
    this.pending = null;
    let at = 0;
    while (buf.length - at >= 4) {
      const size = buf.readInt32BE(at);
      if (size < 0 || size > this.maxFrame) throw new Error(`response frame of ${size} bytes (limit ${this.maxFrame})`);
      if (buf.length - at - 4 < size) break;
      onFrame(buf.subarray(at + 4, at + 4 + size));
      at += 4 + size;
    }
    if (at < buf.length) {
      buf = buf.subarray(at);
      // Copy so a small remainder does not pin a large socket chunk.
      this.pending = Buffer.from(buf);
    }
  }
}

export interface ProduceAnswer {
  readonly correlationId: number;
  /** 0, or the first non-zero partition error code. */
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/** Decodes a Produce response frame (header included). */
export function readProduceAnswer(frame: Buffer, version: number): ProduceAnswer {
  const r = new Reader(frame);
  const correlationId = readResponseHeader(r, ProduceApi.key, ProduceApi.isFlexible(version));
  const res = ProduceApi.decodeResponse(version, r);
  for (const t of res.responses) {
    for (const p of t.partitionResponses) {
      if (p.errorCode !== 0) return { correlationId, errorCode: p.errorCode, errorMessage: p.errorMessage };
    }
  }
  return { correlationId, errorCode: 0, errorMessage: null };
}
