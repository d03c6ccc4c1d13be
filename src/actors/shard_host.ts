// Main-thread side of one shard on a worker thread: spawns its worker, owns the producer end of
// the inbound ring and the consumer end of the outbound ring (the shard's lane 0, shard.ts), and
// holds the control-channel proxy. It is the ring's `ShardPort` (shard_port.ts): the router sends
// through it and the outbound ring's answers are handed to the router's `ShardResultSink`.
// Backpressure: when the inbound ring is full, messages wait in a bounded overflow queue (in
// order) and `blocked` is true; the network layer stops reading the sockets that feed a
// blocked shard until `whenUnblocked()` resolves.
// The worker runs the entry module the server layer hands in (`ShardWorkerEntry`: a file URL,
// or inside the single executable the embedded bundle's text, evaluated from memory), so this
// layer never imports what the entry adds above it.
// Startup: `started()` settles once the worker answered its first control call (with the storage
// backend it chose) or died trying; until then an exit is reported there, not to `onExit`.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { GroupConfig } from '../coordinator/groups/group_api.js';
import { MAX_CLOSES_IN_FLIGHT } from '../log/clean_close.js';
import type { FlushPolicy } from '../log/group_commit.js';
import type { IoMode } from '../native/addon.js';
import { connectControl, type Remote } from './control_channel.js';
import { SpscRing } from './ring_buffer.js';
import { RingDoorbell } from './ring_doorbell.js';
import {
  FETCH_RELEASE_BYTES,
  GROUP_CALL_HEADER_BYTES,
  GROUP_RESULT_HEADER_BYTES,
  MsgType,
  PRODUCE_HEADER_BYTES,
  fetchBytes,
  listOffsetsBytes,
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
import type { ShardPort, ShardResultSink } from './shard_port.js';
import type { IoChoice, ShardControl, ShardReplicationConfig, ShardWorkerData } from './shard_thread.js';
import type { ShardEvent } from './shard.js';

type Pending =
  | { kind: 'produce'; ask: ProduceAsk; records: Buffer }
  | { kind: 'fetch'; ask: FetchAsk }
  | { kind: 'listOffsets'; ask: ListOffsetsAsk }
  | { kind: 'release'; reqId: number }
  | { kind: 'group'; reqId: number; handle: number; payload: Buffer };

function messageBytes(msg: Pending): number {
  switch (msg.kind) {
    case 'produce':
      return PRODUCE_HEADER_BYTES + msg.records.length;
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

/** What a shard's worker runs: its entry module's URL, or its bundled text (evaluated). */
export type ShardWorkerEntry = { readonly url: URL } | { readonly text: string };

export interface ShardHostOptions {
  index: number;
  entry: ShardWorkerEntry;
  ringBytes: number;
  maxOverflowBytes: number;
  flush: FlushPolicy;
  io: IoMode;
  logLevel: string;
  retentionCheckMs: number;
  offsetsTopic: string;
  groupConfig: GroupConfig;
  replication: ShardReplicationConfig;
  sink: ShardResultSink;
  /** Control-plane events of the shard (its leaders' ISR changes). */
  onEvent: (index: number, event: ShardEvent) => void;
  onExit: (index: number, code: number) => void;
}

export class ShardHost implements ShardPort {
  readonly control: Remote<ShardControl>;
  /**
   * Main's end of the shard's placement port: client connections handed to the shard and their
   * forwarded requests travel here, off the data-plane rings (the server layer speaks on it).
   */
  readonly connections: MessagePort;
  private readonly overflow: Pending[] = [];
  private overflowBytes = 0;
  private draining = false;
  private unblockWaiters: Array<() => void> = [];
  private stopped = false;
  private up = false;
  private readonly startup: Promise<IoChoice>;

  private constructor(
    readonly index: number,
    private readonly worker: Worker,
    readonly toShard: SpscRing,
    readonly toMain: SpscRing,
    connections: MessagePort,
    private readonly opts: ShardHostOptions,
  ) {
    this.connections = connections;
    this.control = connectControl<ShardControl>(worker);
    let startFailed: (err: Error) => void = () => undefined;
    this.startup = new Promise<IoChoice>((resolve, reject) => {
      startFailed = reject;
      worker.once('error', reject);
      this.control.ioChoice().then((choice) => {
        this.up = true;
        worker.off('error', reject);
        resolve(choice);
      }, reject);
    });
    this.startup.catch(() => undefined); // observed through started()
    worker.on('exit', (code) => {
      if (!this.up) startFailed(new Error(`shard ${index} exited with code ${code} during startup`));
      else if (!this.stopped) opts.onExit(index, code);
    });
    void this.receiveLoop();
  }

  /** The worker's storage backend once it is up; rejects with its startup error (e.g. io=native unavailable). */
  started(): Promise<IoChoice> {
    return this.startup;
  }

  /** Stops a worker that failed (or whose siblings failed) to start, without the control channel. */
  async abort(): Promise<void> {
    this.stopped = true;
    await this.worker.terminate();
    this.toShard.close();
    this.toMain.close();
  }

  static spawn(opts: ShardHostOptions): ShardHost {
    const toShardSab = SpscRing.allocate(opts.ringBytes);
    const toMainSab = SpscRing.allocate(opts.ringBytes);
    const toShardPorts = new MessageChannel();
    const toMainPorts = new MessageChannel();
    const eventPorts = new MessageChannel();
    const connectionPorts = new MessageChannel();
    const workerData: ShardWorkerData = {
      index: opts.index,
      toShard: toShardSab,
      toMain: toMainSab,
      toShardDoorbell: toShardPorts.port2,
      toMainDoorbell: toMainPorts.port2,
      events: eventPorts.port2,
      connections: connectionPorts.port2,
      flush: opts.flush,
      io: opts.io,
      logLevel: opts.logLevel,
      retentionCheckMs: opts.retentionCheckMs,
      offsetsTopic: opts.offsetsTopic,
      groupConfig: opts.groupConfig,
      replication: opts.replication,
    };
    const entry = opts.entry;
    const worker = new Worker('text' in entry ? entry.text : entry.url, {
      eval: 'text' in entry,
      workerData,
      transferList: [toShardPorts.port2, toMainPorts.port2, eventPorts.port2, connectionPorts.port2],
      name: `shard-${opts.index}`,
    });
    const toShard = new SpscRing(toShardSab, new RingDoorbell(toShardPorts.port1));
    const toMain = new SpscRing(toMainSab, new RingDoorbell(toMainPorts.port1));
    eventPorts.port1.on('message', (event: ShardEvent) => opts.onEvent(opts.index, event));
    eventPorts.port1.unref();
    return new ShardHost(opts.index, worker, toShard, toMain, connectionPorts.port1, opts);
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

  /** Closes the shard's logs (`closeLanes` at once) and ends its worker. */
  async stop(closeLanes = MAX_CLOSES_IN_FLIGHT): Promise<void> {
    this.stopped = true;
    await this.control.shutdown(closeLanes);
    await this.worker.terminate();
    this.toShard.close();
    this.toMain.close();
  }

  private send(msg: Pending, force = false): boolean {
    const bytes = messageBytes(msg);
    if (this.overflow.length === 0 && this.tryWrite(msg, bytes)) return true;
    if (!force && this.overflowBytes + bytes > this.opts.maxOverflowBytes) return false;
    this.overflow.push(msg);
    this.overflowBytes += bytes;
    if (!this.draining) void this.drainOverflow();
    return true;
  }

  private tryWrite(msg: Pending, bytes: number): boolean {
    const ring = this.toShard;
    if (bytes > ring.maxMessageBytes) throw new RangeError(`ring message of ${bytes} bytes exceeds ring limit ${ring.maxMessageBytes}`);
    const at = ring.reserve(bytes);
    if (at < 0) return false;
    switch (msg.kind) {
      case 'produce':
        writeProduce(ring.bytes, at, msg.ask, msg.records);
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
    ring.publish();
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
          await this.toShard.waitForSpace();
        }
      }
    } finally {
      this.draining = false;
    }
    const waiters = this.unblockWaiters;
    this.unblockWaiters = [];
    for (const w of waiters) w();
  }

  private async receiveLoop(): Promise<void> {
    const ring = this.toMain;
    const sink = this.opts.sink;
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
