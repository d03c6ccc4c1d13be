// Durable storage of one metadata-quorum node, in its metadata log directory: the election state
// (`quorum-state`), snapshots (`<endOffset>-<epoch>.checkpoint`) and the log (`__cluster_metadata-0/`).
// openQuorumStorage restores what the Raft core needs (`new RaftNode(config, restore)`) and
// repairs what a crash left half done; QuorumStorage then carries out steps 1-3 of each Ready.
// Lives on the quorum driver's thread: open is synchronous (start-up), every later write is
// asynchronous (libuv's pool or io_uring) and the operations run one at a time in call order.
// Invariants: each operation resolves only once what it wrote is durable; restored entries are
// contiguous and start at the snapshot's end offset (0 without a snapshot); a rejected operation
// means the disk can no longer vouch for the node's state, and the driver stops the node (KRaft
// halts on a failed flush) rather than go on.
import { join } from 'node:path';
import type { RaftRestore } from '../../coordinator/raft/raft_node.js';
import type { Entry, HardState, NodeId, OffsetAndEpoch, Ready, Snapshot, SnapshotMeta } from '../../coordinator/raft/types.js';
import { NodeIoBackend, type IoBackend, type StorageError } from '../../log/io_backend.js';
import { makeDirDurably } from '../../log/log_recovery.js';
import { QuorumStorageError } from './quorum_errors.js';
import { QuorumStateFile } from './quorum_state_file.js';
import { RaftLogStore } from './raft_log_store.js';
import { SnapshotStore, type SnapshotChunk, type SnapshotWriter } from './snapshot_store.js';

/** The metadata partition's directory inside the metadata log directory. */
export const METADATA_LOG_NAME = '__cluster_metadata-0';
/** KRaft's metadata.log.segment.bytes is 1 GiB; metadata logs here are snapshotted far sooner. */
const DEFAULT_SEGMENT_BYTES = 64 << 20;

export interface QuorumStorageOptions {
  /** Voters when neither snapshot nor log names them (the static quorum), passed through to the restore. */
  readonly bootstrapVoters: readonly NodeId[];
  /** The log's write-and-fdatasync path; default NodeIoBackend (libuv's pool). */
  readonly io?: IoBackend;
  readonly now?: () => number;
  readonly segmentBytes?: number;
  readonly onWarning?: (what: string, err: StorageError) => void;
}

export interface OpenedQuorumStorage {
  /** What `new RaftNode(config, restore)` takes. */
  readonly restore: RaftRestore;
  readonly storage: QuorumStorage;
  /** Damaged snapshot files refused at open (an older snapshot, or none, is in force): for the driver's log. */
  readonly refusedSnapshots: readonly QuorumStorageError[];
}

/**
 * Opens the storage in `dir` (created if missing) and restores the node. Throws
 * QuorumStorageError for a damaged quorum-state file ('corrupt-quorum-state') or a log that does
 * not reach back to the snapshot in force ('log-gap').
 */
export function openQuorumStorage(dir: string, options: QuorumStorageOptions): OpenedQuorumStorage {
  makeDirDurably(dir);
  const { file, state } = QuorumStateFile.open(dir);
  const snapshots = SnapshotStore.open(dir);
  const snapshot = snapshots.latest;
  const start = snapshot?.meta.id.endOffset ?? 0;
  const log = RaftLogStore.open(join(dir, METADATA_LOG_NAME), {
    io: options.io ?? new NodeIoBackend(),
    now: options.now ?? Date.now,
    segmentBytes: options.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
    initialStartOffset: start,
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
  });
  if (log.startOffset > start) {
    throw new QuorumStorageError('log-gap', `the log in ${dir} starts at ${log.startOffset}, past the ${snapshot ? `snapshot ending at ${start}` : 'log start 0 (no snapshot)'}`);
  }
  if (snapshot && !logHolds(log, snapshot.meta.id)) log.reset(start);
  // A compaction interrupted by a crash left segments below the snapshot.
  log.deleteBefore(start);
  const restore: RaftRestore = { hardState: state, snapshot, entries: log.readFrom(start), bootstrapVoters: options.bootstrapVoters };
  return { restore, storage: new QuorumStorage(file, snapshots.store, log), refusedSnapshots: snapshots.refused };
}

/**
 * Whether the log continues the snapshot `id`: it reaches the snapshot's end and, where it holds
 * the entry just before that end, that entry has the snapshot's epoch. Otherwise the snapshot was
 * installed over a log it replaces and the crash came before the log was reset.
 */
function logHolds(log: RaftLogStore, id: OffsetAndEpoch): boolean {
  if (log.endOffset < id.endOffset) return false;
  if (log.startOffset >= id.endOffset) return true;
  const [before] = log.readFrom(id.endOffset - 1);
  return before?.offset === id.endOffset - 1 && before.epoch === id.epoch;
}

export class QuorumStorage {
  /** The last operation queued; the next starts once it settles. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly stateFile: QuorumStateFile,
    private readonly snapshots: SnapshotStore,
    private readonly log: RaftLogStore,
  ) {}

  get logStartOffset(): number {
    return this.log.startOffset;
  }

  /** Everything below it is durable. */
  get logEndOffset(): number {
    return this.log.endOffset;
  }

  /** The snapshot in force. */
  get latestSnapshot(): SnapshotMeta | null {
    return this.snapshots.latest;
  }

  /** Ready steps 1-3 in order: the election state, a truncation, a snapshot install, then the entries, all durable. */
  persist(r: Ready): Promise<void> {
    return this.run(async () => {
      if (r.hardState) await this.stateFile.save(r.hardState);
      if (r.truncateTo !== null) this.log.truncateTo(r.truncateTo);
      if (r.snapshot) await this.install(r.snapshot);
      await this.log.append(r.entries);
    });
  }

  saveHardState(s: HardState): Promise<void> {
    return this.run(() => this.stateFile.save(s));
  }

  /** Appends entries continuing the log; resolves once they are durable. */
  append(entries: readonly Entry[]): Promise<void> {
    return this.run(() => this.log.append(entries));
  }

  /** Drops the entries at or past `offset` (a diverged tail). */
  truncateTo(offset: number): Promise<void> {
    return this.run(() => this.log.truncateTo(offset));
  }

  /**
   * A snapshot from the leader replaces the whole log: it is made durable and put in force (unless
   * a SnapshotWriter already did), then the log restarts empty at its end offset.
   */
  installSnapshot(s: Snapshot): Promise<void> {
    return this.run(() => this.install(s));
  }

  /**
   * The state machine's own snapshot at an applied offset (inside the log): made durable and put
   * in force, then older snapshots and the log segments wholly below it are deleted.
   */
  compact(s: Snapshot): Promise<void> {
    return this.run(async () => {
      const end = s.meta.id.endOffset;
      if (end < this.log.startOffset || end > this.log.endOffset) {
        throw new RangeError(`snapshot ending at ${end} is outside the log [${this.log.startOffset}, ${this.log.endOffset})`);
      }
      await this.snapshots.save(s);
      this.log.deleteBefore(end);
    });
  }

  /** FetchSnapshot: a chunk of the snapshot in force (KafkaError SNAPSHOT_NOT_FOUND / POSITION_OUT_OF_RANGE). */
  readSnapshot(id: OffsetAndEpoch, position: number, maxBytes: number): Promise<SnapshotChunk> {
    return this.snapshots.read(id, position, maxBytes);
  }

  /** A writer for a snapshot arriving in FetchSnapshot chunks; installSnapshot then resets the log to it. */
  snapshotWriter(meta: SnapshotMeta): Promise<SnapshotWriter> {
    return this.snapshots.writer(meta);
  }

  /** Waits for queued operations, then closes the log cleanly. */
  close(): Promise<void> {
    return this.run(() => this.log.close());
  }

  private async install(s: Snapshot): Promise<void> {
    const current = this.snapshots.latest;
    if (current?.id.endOffset !== s.meta.id.endOffset || current.id.epoch !== s.meta.id.epoch) await this.snapshots.save(s);
    this.log.reset(s.meta.id.endOffset);
  }

  private run<T>(op: () => Promise<T> | T): Promise<T> {
    const next = this.tail.then(op, op);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
