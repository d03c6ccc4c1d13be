// A `ShardPort` over one SPSC ring pair to a shard on another thread (shard_port.ts): the producer
// end of the request ring and the consumer end of the answer ring. Main holds one per shard worker
// (`ShardHost`, the shard's lane 0); under --connection-placement shards each shard also holds one
// per peer shard (the shard mesh, shard_mesh.ts; the peer drains it as a ring lane), so its
// placed connections reach every shard's partitions without main.
// Thread: whoever built it (main, or the reaching shard's worker); the rings' other ends live on
// the shard it reaches.
// Backpressure: when the request ring is full, messages wait in a bounded overflow queue (in
// order, holding copies of the caller's buffers, which ShardPort reads during the call only),
// and `blocked` is true; the connections feeding the port stop reading their sockets until
// `whenUnblocked()` resolves. Answers are read into the `ShardResultSink` given to `start`, which
// may come later than the rings (a shard's router is built after its mesh); nothing is sent
// before it, so no answer can arrive first.
import {
  FETCH_RELEASE_BYTES,
  GROUP_CALL_HEADER_BYTES,
  GROUP_RESULT_HEADER_BYTES,
  MsgType,
  fetchBytes,
  listOffsetsBytes,
  produceMessageBytes,
  readFetchProgress,
  readFetchResult,
  readListOffsetsResult,
  readProduceResult,
  writeFetch,
  writeFetchRelease,
  writeGroupCall,
  writeListOffsets,
  writeProduce,
  type FetchAsk,
  type ListOffsetsAsk,
  type ProduceAsk,
} from './ring_messages.js';
import type { SpscRing } from './ring_buffer.js';
import type { ShardPort, ShardResultSink } from './shard_port.js';

type Pending =
  | { kind: 'produce'; ask: ProduceAsk; records: Buffer }
  | { kind: 'fetch'; ask: FetchAsk }
  | { kind: 'listOffsets'; ask: ListOffsetsAsk }
  | { kind: 'release'; reqId: number }
  | { kind: 'group'; reqId: number; handle: number; payload: Buffer };

function messageBytes(msg: Pending): number {
  switch (msg.kind) {
    case 'produce':
      return produceMessageBytes(msg.records.length);
    case 'fetch':
      return fetchBytes(msg.ask.partitions.length);
    case 'listOffsets':
      return listOffsetsBytes(msg.ask.partitions.length);
    case 'release':
      return FETCH_RELEASE_BYTES;
    case 'group':
      return GROUP_CALL_HEADER_BYTES + msg.payload.length;
  }
}

/** `msg` holding copies of the caller's buffers, to wait in the overflow queue. */
function ownBytes(msg: Pending): Pending {
  switch (msg.kind) {
    case 'produce':
      return { ...msg, records: Buffer.from(msg.records) };
    case 'group':
      return { ...msg, payload: Buffer.from(msg.payload) };
    default:
      return msg;
  }
}

export class RingShardPort implements ShardPort {
  private readonly overflow: Pending[] = [];
  private overflowBytes = 0;
  private draining = false;
  private unblockWaiters: Array<() => void> = [];
  private stopped = false;
  private started = false;

  /** `index`: the shard's index, which its answers are reported under. */
  constructor(
    readonly index: number,
    readonly requests: SpscRing,
    readonly answers: SpscRing,
    private readonly maxOverflowBytes: number,
  ) {}

  /** Starts reading answers into `sink`; once, before the first send. */
  start(sink: ShardResultSink): this {
    if (this.started) throw new Error(`RingShardPort ${this.index}: already started`);
    this.started = true;
    void this.receiveLoop(sink);
    return this;
  }

  /** Stops reading answers and closes this end of both rings' doorbells. */
  close(): void {
    this.stopped = true;
    this.requests.close();
    this.answers.close();
  }

  get blocked(): boolean {
    return this.overflow.length > 0;
  }

  /** Resolves once the overflow queue has drained into the ring. */
  whenUnblocked(): Promise<void> {
    if (!this.blocked) return Promise.resolve();
    return new Promise((resolve) => this.unblockWaiters.push(resolve));
  }

  /** False when the overflow bound is hit: the caller must fail the request instead. */
  produce(ask: ProduceAsk, records: Buffer): boolean {
    return this.send({ kind: 'produce', ask, records });
  }

  fetch(ask: FetchAsk): boolean {
    return this.send({ kind: 'fetch', ask });
  }

  /** Every partition of one ListOffsets request this shard owns; false when the overflow bound is hit. */
  listOffsets(ask: ListOffsetsAsk): boolean {
    return this.send({ kind: 'listOffsets', ask });
  }

  /** A serialized GroupCall for the coordinator of offsets partition `handle`; false when the overflow bound is hit. */
  groupCall(reqId: number, handle: number, payload: Buffer): boolean {
    return this.send({ kind: 'group', reqId, handle, payload });
  }

  release(reqId: number): void {
    // Releases are tiny and must not be lost (a parked fetch would wait out its deadline),
    // so they bypass the byte bound.
    this.send({ kind: 'release', reqId }, true);
  }

  private send(msg: Pending, force = false): boolean {
    const bytes = messageBytes(msg);
    if (this.overflow.length === 0 && this.tryWrite(msg, bytes)) return true;
    if (!force && this.overflowBytes + bytes > this.maxOverflowBytes) return false;
    // ShardPort's contract: the caller's buffers are read during the call only (a placed
    // connection's produce frame serves the next large frame once its handler returned).
    this.overflow.push(ownBytes(msg));
    this.overflowBytes += bytes;
    if (!this.draining) void this.drainOverflow();
    return true;
  }

  private tryWrite(msg: Pending, bytes: number): boolean {
    const ring = this.requests;
    if (bytes > ring.maxMessageBytes) throw new RangeError(`ring message of ${bytes} bytes exceeds ring limit ${ring.maxMessageBytes}`);
    const at = ring.reserve(bytes);
    if (at < 0) return false;
    let written = bytes;
    switch (msg.kind) {
      case 'produce':
        written = writeProduce(ring.bytes, at, msg.ask, msg.records);
        break;
      case 'fetch':
        writeFetch(ring.bytes, at, msg.ask);
        break;
      case 'listOffsets':
        writeListOffsets(ring.bytes, at, msg.ask);
        break;
      case 'release':
        writeFetchRelease(ring.bytes, at, msg.reqId);
        break;
      case 'group':
        writeGroupCall(ring.bytes, at, msg.reqId, msg.handle, msg.payload);
        break;
    }
    ring.publish(written);
    return true;
  }

  private async drainOverflow(): Promise<void> {
    this.draining = true;
    try {
      while (this.overflow.length > 0) {
        const head = this.overflow[0]!;
        const bytes = messageBytes(head);
        if (this.tryWrite(head, bytes)) {
          this.overflow.shift();
          this.overflowBytes -= bytes;
        } else {
          await this.requests.waitForSpace();
        }
      }
    } finally {
      this.draining = false;
    }
    const waiters = this.unblockWaiters;
    this.unblockWaiters = [];
    for (const w of waiters) w();
  }

  private async receiveLoop(sink: ShardResultSink): Promise<void> {
    const ring = this.answers;
    while (!this.stopped) {
      await ring.waitForData();
      for (let off = ring.peek(); off >= 0; off = ring.peek()) {
        const b = ring.bytes;
        switch (b[off]) {
          case MsgType.PRODUCE_RESULT:
            sink.onProduceResult(this.index, readProduceResult(b, off));
            break;
          case MsgType.FETCH_RESULT: {
            const r = readFetchResult(b, off);
            sink.onFetchResult(this.index, r.reqId, r.parts, r.waited);
            break;
          }
          case MsgType.FETCH_PROGRESS: {
            const r = readFetchProgress(b, off);
            sink.onFetchProgress(this.index, r.reqId, r.bytes);
            break;
          }
          case MsgType.GROUP_RESULT:
            sink.onGroupResult(this.index, b.readUInt32LE(off + 4), b.subarray(off + GROUP_RESULT_HEADER_BYTES, off + ring.lastLength));
            break;
          case MsgType.LIST_OFFSETS_RESULT: {
            const r = readListOffsetsResult(b, off);
            sink.onListOffsetsResult(this.index, r.reqId, r.parts);
            break;
          }
        }
        ring.release();
      }
    }
  }
}
