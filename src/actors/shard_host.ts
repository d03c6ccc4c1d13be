// Main-thread side of one shard on a worker thread: spawns its worker, holds the control-channel
// proxy and main's end of the shard's placement port, and owns main's data-plane port into the
// shard, a `RingShardPort` (ring_shard_port.ts) over the shard's lane 0 ring pair: the router
// sends through `port`, and the outbound ring's answers go to the router's `ShardResultSink`.
// Backpressure is the port's: a bounded overflow queue behind a full inbound ring, `blocked`
// while it holds anything.
// Under --connection-placement shards main also allocates the shard mesh (shard_mesh.ts) and
// hands each worker its ends in `mesh`; under --connection-placement main (or where placement
// falls back to main) `mesh` is null and nothing more is allocated.
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
import { configureShardHeaps } from './shard_heap.js';
import { RingDoorbell } from './ring_doorbell.js';
import { RingShardPort } from './ring_shard_port.js';
import { meshTransfers, type ShardMeshEnds } from './shard_mesh.js';
import type { ShardResultSink } from './shard_port.js';
import type { IoChoice, ShardControl, ShardReplicationConfig, ShardWorkerData } from './shard_thread.js';
import type { ShardEvent } from './shard.js';

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
  /** Bound on produced bytes the shard holds until their commit settles (Shard.producesWait). */
  maxUncommittedProduceBytes: number;
  /** This shard's ends of the shard mesh (placement on shards only), else null. */
  mesh: ShardMeshEnds | null;
  sink: ShardResultSink;
  /** Control-plane events of the shard (its leaders' ISR changes). */
  onEvent: (index: number, event: ShardEvent) => void;
  onExit: (index: number, code: number) => void;
}

export class ShardHost {
  readonly control: Remote<ShardControl>;
  /**
   * Main's end of the shard's placement port: client connections handed to the shard and their
   * forwarded requests travel here, off the data-plane rings (the server layer speaks on it).
   */
  readonly connections: MessagePort;
  /** Main's data-plane port into the shard (its lane 0 ring pair); the router sends through it. */
  readonly port: RingShardPort;
  private stopped = false;
  private up = false;
  private readonly startup: Promise<IoChoice>;

  private constructor(
    readonly index: number,
    private readonly worker: Worker,
    toShard: SpscRing,
    toMain: SpscRing,
    connections: MessagePort,
    opts: ShardHostOptions,
  ) {
    this.connections = connections;
    this.port = new RingShardPort(index, toShard, toMain, opts.maxOverflowBytes).start(opts.sink);
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
  }

  /** The worker's storage backend once it is up; rejects with its startup error (e.g. io=native unavailable). */
  started(): Promise<IoChoice> {
    return this.startup;
  }

  /** Stops a worker that failed (or whose siblings failed) to start, without the control channel. */
  async abort(): Promise<void> {
    this.stopped = true;
    await this.worker.terminate();
    this.port.close();
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
      maxUncommittedProduceBytes: opts.maxUncommittedProduceBytes,
      mesh: opts.mesh,
    };
    const entry = opts.entry;
    configureShardHeaps();
    const worker = new Worker('text' in entry ? entry.text : entry.url, {
      eval: 'text' in entry,
      workerData,
      transferList: [
        toShardPorts.port2, toMainPorts.port2, eventPorts.port2, connectionPorts.port2, ...(opts.mesh === null ? [] : meshTransfers(opts.mesh)),
      ],
      name: `shard-${opts.index}`,
    });
    const toShard = new SpscRing(toShardSab, new RingDoorbell(toShardPorts.port1));
    const toMain = new SpscRing(toMainSab, new RingDoorbell(toMainPorts.port1));
    eventPorts.port1.on('message', (event: ShardEvent) => opts.onEvent(opts.index, event));
    eventPorts.port1.unref();
    return new ShardHost(opts.index, worker, toShard, toMain, connectionPorts.port1, opts);
  }

  /** Closes the shard's logs (`closeLanes` at once) and ends its worker. */
  async stop(closeLanes = MAX_CLOSES_IN_FLIGHT): Promise<void> {
    this.stopped = true;
    await this.control.shutdown(closeLanes);
    await this.worker.terminate();
    this.port.close();
  }
}
