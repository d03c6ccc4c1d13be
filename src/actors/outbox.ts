// A shard's outbound path to main (shard worker thread), the sink of its lane 0 (lanes.ts): writes
// results into the outbound ring, in order, and queues them while the ring is full. `Outgoing` is
// what every lane's sink receives. The queue's bound is enforced by the shard's drain loop,
// not by dropping: once more than `maxBytes` wait, `overLimit` is true and the shard stops
// draining its inbound ring until `whenUnderLimit()` resolves. Results of work already under way
// (commits in flight, parked fetches, group timers) may still join, so the queue can exceed the
// limit by that much, which stopping intake bounds; main in turn stops reading the sockets that
// feed a shard whose inbound ring is full. Every result is written exactly once, in send order; a
// Fetch answer whose file ranges are more than the ring takes answers fewer (fitFetchResult).
import type { SpscRing } from './ring_buffer.js';
import {
  FETCH_PROGRESS_BYTES,
  GROUP_RESULT_HEADER_BYTES,
  PRODUCE_RESULT_BYTES,
  fetchResultBytes,
  fitFetchResult,
  listOffsetsResultBytes,
  writeFetchProgress,
  writeFetchResult,
  writeGroupResult,
  writeListOffsetsResult,
  writeProduceResult,
  type FetchPartitionResult,
  type ListOffsetsPartitionResult,
  type ProduceResult,
} from './ring_messages.js';

export type Outgoing =
  | { kind: 'produce'; result: ProduceResult }
  | { kind: 'fetch'; reqId: number; parts: FetchPartitionResult[]; waited: boolean }
  | { kind: 'fetchProgress'; reqId: number; bytes: number }
  | { kind: 'group'; reqId: number; payload: Buffer }
  | { kind: 'listOffsets'; reqId: number; parts: ListOffsetsPartitionResult[] };

function sizeOf(msg: Outgoing): number {
  switch (msg.kind) {
    case 'produce':
      return PRODUCE_RESULT_BYTES;
    case 'fetch':
      return fetchResultBytes(msg.parts);
    case 'fetchProgress':
      return FETCH_PROGRESS_BYTES;
    case 'group':
      return GROUP_RESULT_HEADER_BYTES + msg.payload.length;
    case 'listOffsets':
      return listOffsetsResultBytes(msg.parts.length);
  }
}

/** Default bound on queued result bytes: a few fetch answers' worth of ranges, far more produce acks. */
export const MAX_OUTBOX_BYTES = 4 << 20;

export class Outbox {
  private readonly queue: Outgoing[] = [];
  private queuedBytes = 0;
  private flushing = false;
  private underLimitWaiters: Array<() => void> = [];

  constructor(
    private readonly ring: SpscRing,
    readonly maxBytes: number = MAX_OUTBOX_BYTES,
  ) {}

  get depth(): number {
    return this.queue.length;
  }

  get overLimit(): boolean {
    return this.queuedBytes > this.maxBytes;
  }

  /** Resolves once at most `maxBytes` wait (at once if that is already so). */
  whenUnderLimit(): Promise<void> {
    if (!this.overLimit) return Promise.resolve();
    return new Promise((resolve) => this.underLimitWaiters.push(resolve));
  }

  send(msg: Outgoing): void {
    let bytes = sizeOf(msg);
    if (msg.kind === 'fetch' && bytes > this.ring.maxMessageBytes) {
      msg = { ...msg, parts: fitFetchResult(msg.parts, this.ring.maxMessageBytes) };
      bytes = sizeOf(msg);
    }
    if (this.queue.length === 0 && this.tryWrite(msg, bytes)) return;
    this.queue.push(msg);
    this.queuedBytes += bytes;
    if (!this.flushing) void this.flush();
  }

  /** `bytes`: sizeOf(msg), which the caller has. */
  private tryWrite(msg: Outgoing, bytes: number): boolean {
    const ring = this.ring;
    const at = ring.reserve(bytes);
    if (at < 0) return false;
    switch (msg.kind) {
      case 'produce':
        writeProduceResult(ring.bytes, at, msg.result);
        break;
      case 'fetch':
        writeFetchResult(ring.bytes, at, msg.reqId, msg.parts, msg.waited);
        break;
      case 'fetchProgress':
        writeFetchProgress(ring.bytes, at, msg.reqId, msg.bytes);
        break;
      case 'group':
        writeGroupResult(ring.bytes, at, msg.reqId, msg.payload);
        break;
      case 'listOffsets':
        writeListOffsetsResult(ring.bytes, at, msg.reqId, msg.parts);
        break;
    }
    ring.publish();
    return true;
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const head = this.queue[0]!;
        const bytes = sizeOf(head);
        if (!this.tryWrite(head, bytes)) {
          await this.ring.waitForSpace();
          continue;
        }
        this.queue.shift();
        this.queuedBytes -= bytes;
        if (!this.overLimit && this.underLimitWaiters.length > 0) {
          const waiters = this.underLimitWaiters;
          this.underLimitWaiters = [];
          for (const w of waiters) w();
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
