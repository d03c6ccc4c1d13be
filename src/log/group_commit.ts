// One group commit per shard: every partition log that asked for a commit within the same
// macrotask is written (and, per the flush policy, fdatasync'ed) in ONE IoBackend submission.
// Runs on the shard worker that owns the logs. Requests arriving while a cycle is in flight form
// the next one, which starts once the current one settles, or, under 'always' on a backend that
// reports landed writes, as soon as the current one's writes landed: that cycle (`behind`) copies
// its data into the files while the head's fdatasync runs, takes in every request made until the
// head settles (writing each at once), and submits its own syncs only then. So at most two cycles
// are in flight, the logs learn their outcomes in cycle order, and at most one sync capture per
// segment is outstanding.
// Under 'always', a cycle with a log that splitsSync (a replicated leader) tells every log of the
// cycle once its writes landed, before their syncs finish (followers may fetch the bytes now), so
// the followers' fetch and fdatasync overlap the leader's fdatasync instead of following it. On a
// backend that reportsWritten that is still one submission (the backend's writes-landed report);
// on one that cannot, two: the writes, then, after the logs were told, the syncs.
// A cycle that did not sync (--flush never, or between interval syncs) then asks the backend to
// start writing its logs' landed bytes back, a few MiB at a time (commit_port.ts WRITEBACK_BYTES),
// so that a later fdatasync (a roll's seal, the interval's) finds little left to write.
// Invariants: a waiter resolves only after the data its log had staged before commit() is
// written (synced under 'always') and readable; on failure every waiter whose data was rolled back
// (this cycle's, the whole cycle behind it, and those queued behind it for the same logs) is
// rejected with the StorageError, which onError hears once; a failed cycle's rollback waits until
// the writes behind it stopped, so it never truncates a file under them.
// Timings, taken by the metrics scrape (takeTimings): each cycle's duration, from its submission
// (a cycle behind the head: from its syncs' submission) to completion, and each cycle's queue wait,
// from its earliest request to the start of its submission (a request made while another cycle is
// in flight waits for that one, or for its writes, first).
import { performance } from 'node:perf_hooks';
import { BucketHistogram, DISK_FLUSH_BOUNDS, type BucketCounts } from '../common/bucket_histogram.js';
import type { PartitionLog } from './partition_log.js';
import { StorageError, type IoBackend, type WritebackRange, type WriteOp } from './io_backend.js';

export type FlushPolicy =
  | { readonly kind: 'always' }
  | { readonly kind: 'interval'; readonly ms: number }
  | { readonly kind: 'never' };

export interface CommitStats {
  /** IoBackend submissions made. */
  commits: number;
  /** Mean number of logs per submission. */
  avgBatchLogs: number;
  lastCommitMs: number;
  inFlight: boolean;
}

/** Group commit timings since the previous takeTimings(), in seconds. */
export interface CommitTimings {
  /** IoBackend submissions, from submission to completion. */
  durations: BucketCounts;
  /** Cycles with requests, from their earliest request to the start of their submission. */
  queueWait: BucketCounts;
}

interface Waiter {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: StorageError): void;
}

function makeWaiter(): Waiter {
  let resolve!: () => void;
  let reject!: (err: StorageError) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface Cycle {
  readonly waiters: Map<PartitionLog, Waiter>;
  readonly participants: Set<PartitionLog>;
  /**
   * The participants whose staged data this cycle took (take() gave writes). Its outcome reaches
   * only their in-flight data: another participant (a drain with nothing staged, a sync-only one)
   * may meanwhile have data in flight in the cycle behind, which this one must not complete.
   */
  readonly took: Set<PartitionLog>;
  readonly requested: PartitionLog[];
  readonly synced: boolean;
  /** performance.now() of the earliest commit() among the waiters; null for a sync-only cycle. */
  readonly requestedAt: number | null;
  /** As the head: its writes are in the files and its syncs run. */
  landed: boolean;
  /** As the head: its submission failed while writes of the cycle behind it still ran; settled once they stopped. */
  deferredError: StorageError | null;
}

/** The cycle behind the head (under 'always'): open to more requests until the head settles. */
interface Behind {
  readonly cycle: Cycle;
  /** Requests join it until the head settles; then its last data is written and it syncs. */
  open: boolean;
  /** Its write-only submissions in flight. */
  writing: number;
  /** The first of its writes that failed: the cycle fails whole once promoted. */
  error: StorageError | null;
  /** Logs whose data staged since the last write pass is still to be written. */
  readonly toWrite: Set<PartitionLog>;
  /** A write pass for requests that joined is queued (setImmediate). Logs already in cycle.took add to their area (takeMore). */
  writeScheduled: boolean;
}

/** The refusal a commit request gets when its log closed before the request's data was taken. */
function closedBeforeCommit(log: PartitionLog): StorageError {
  return new StorageError(`log ${log.dir} was closed before its data was committed`);
}

export class GroupCommitter {
  private next = new Map<PartitionLog, Waiter>();
  /** 'interval' only: logs written since their last fdatasync. */
  private readonly unsynced = new Set<PartitionLog>();
  private syncDue = false;
  /** The oldest cycle in flight: its one submission (writes and syncs), or its syncs alone. */
  private head: Cycle | null = null;
  /** Under 'always': a cycle writing its data while the head syncs; it syncs after the head settles. */
  private behind: Behind | null = null;
  private scheduled = false;
  private closed = false;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly timer: NodeJS.Timeout | null = null;
  private commits = 0;
  private logsCommitted = 0;
  private lastCommitMs = 0;
  /** performance.now() of the first commit() since the last collect(); null while none is queued. */
  private firstRequestAt: number | null = null;
  /** performance.now() at which the in-flight submission was handed to the IoBackend. */
  private submittedAt = 0;
  /** Reused by every unsynced cycle's startWriteback (one per commit cycle, rarely non-empty). */
  private readonly writebackRanges: WritebackRange[] = [];
  private readonly durations = new BucketHistogram(DISK_FLUSH_BOUNDS);
  private readonly queueWait = new BucketHistogram(DISK_FLUSH_BOUNDS);

  constructor(
    private readonly io: IoBackend,
    private readonly policy: FlushPolicy,
    private readonly onError: (err: StorageError) => void,
  ) {
    if (policy.kind === 'interval') {
      this.timer = setInterval(() => this.requestSync(), policy.ms);
      this.timer.unref();
    }
  }

  /** Resolves once everything `log` staged before this call is written (synced per policy) and readable. */
  commit(log: PartitionLog): Promise<void> {
    if (this.closed) return Promise.reject(new StorageError('group committer is closed'));
    if (this.behind?.open) return this.joinBehind(this.behind, log);
    let w = this.next.get(log);
    if (!w) {
      this.firstRequestAt ??= performance.now();
      w = makeWaiter();
      this.next.set(log, w);
    }
    this.schedule();
    return w.promise;
  }

  stats(): CommitStats {
    return {
      commits: this.commits,
      avgBatchLogs: this.commits === 0 ? 0 : this.logsCommitted / this.commits,
      lastCommitMs: this.lastCommitMs,
      inFlight: this.head !== null,
    };
  }

  /** The timings since the previous call (the metrics scrape's deltas). */
  takeTimings(): CommitTimings {
    return { durations: this.durations.take(), queueWait: this.queueWait.take() };
  }

  /** Refuses new commits, runs the queued ones (and a last sync under 'interval'), then resolves. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.unsynced.size > 0) this.requestSync();
    while (this.head !== null || this.behind !== null || this.scheduled) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private requestSync(): void {
    if (this.unsynced.size === 0) return;
    this.syncDue = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || !this.canStart()) return;
    this.scheduled = true;
    setImmediate(this.runCycle);
  }

  /**
   * Whether a new cycle may start now: with none in flight, or, under 'always' on a backend that
   * reports landed writes, while the head's syncs run after its writes landed (none behind it yet).
   * The behind cycle copies its data while the head's fdatasync waits on the disk; on this VM, where
   * a copy into fresh page cache costs ~1.6 ms per MiB, one commit at a time left the disk idle
   * for that long per commit.
   */
  private canStart(): boolean {
    if (this.behind !== null) return false;
    if (this.head === null) return true;
    return this.head.landed && this.policy.kind === 'always' && this.io.reportsWritten;
  }

  private readonly runCycle = (): void => {
    this.scheduled = false;
    if (!this.canStart()) return;
    const cycle = this.collect();
    const now = performance.now();
    if (cycle.requestedAt !== null) this.queueWait.observe((now - cycle.requestedAt) / 1000);
    if (this.head !== null) return this.startBehind(cycle);
    const writes: WriteOp[] = [];
    for (const log of cycle.requested) {
      const ops = log.commitPort.take();
      if (ops === null) continue;
      cycle.took.add(log);
      for (const op of ops) writes.push(op);
    }
    this.head = cycle;
    this.submittedAt = now;
    const split = cycle.synced && writes.length > 0 && cycle.requested.some((log) => log.commitPort.splitsSync);
    if (split && !this.io.reportsWritten) {
      this.io.commit(writes, []).then(
        () => this.syncWritten(cycle),
        (err: unknown) => this.settle(cycle, StorageError.from(err, 'group commit')),
      );
      return;
    }
    // Captured before the writes land, also for a split cycle: syncTargets() counts the in-flight
    // bytes, so the fdatasyncs cover them.
    const syncFds = cycle.synced ? this.syncTargetsOf(cycle) : [];
    if (writes.length === 0 && syncFds.length === 0) return this.settle(cycle, null, false);
    const pipelines = cycle.synced && writes.length > 0 && this.io.reportsWritten;
    this.io.commit(writes, syncFds, split || pipelines ? () => this.landed(cycle, split) : undefined).then(
      () => this.settle(cycle, null),
      (err: unknown) => this.settle(cycle, StorageError.from(err, 'group commit')),
    );
  };

  /** The head's writes landed and its syncs run: a split cycle's logs let followers read, and the next cycle may start its writes. */
  private landed(cycle: Cycle, split: boolean): void {
    if (split) this.tellWritten(cycle);
    cycle.landed = true;
    if (this.next.size > 0) this.schedule();
  }

  /**
   * A cycle started while the head syncs: it writes its data now, without syncs (the backend starts
   * them to disk as they land), and so does every request joining it until the head settles; its
   * syncs are captured and submitted only then, so the logs see each cycle's outcome in order and
   * one sync capture per segment at a time. Requests made while the head syncs thus wait for one
   * sync after the head's, as they did when the next cycle started only once the head settled.
   */
  private startBehind(cycle: Cycle): void {
    const b: Behind = { cycle, open: true, writing: 0, error: null, toWrite: new Set(cycle.requested), writeScheduled: false };
    this.behind = b;
    this.writeBehind(b);
  }

  private joinBehind(b: Behind, log: PartitionLog): Promise<void> {
    if (!log.commitPort.isOpen) return Promise.reject(closedBeforeCommit(log));
    const c = b.cycle;
    let w = c.waiters.get(log);
    if (!w) {
      w = makeWaiter();
      c.waiters.set(log, w);
    }
    if (!c.participants.has(log)) {
      c.participants.add(log);
      c.requested.push(log);
    }
    b.toWrite.add(log);
    if (!b.writeScheduled) {
      b.writeScheduled = true;
      setImmediate(() => {
        b.writeScheduled = false;
        if (b.open) this.writeBehind(b);
      });
    }
    return w.promise;
  }

  /** Writes what the behind cycle's logs staged since its last pass, in one write-only submission. */
  private writeBehind(b: Behind): void {
    const writes: WriteOp[] = [];
    for (const log of b.toWrite) {
      const ops = b.cycle.took.has(log) ? log.commitPort.takeMore() : log.commitPort.take();
      if (ops === null) continue;
      b.cycle.took.add(log);
      for (const op of ops) writes.push(op);
    }
    b.toWrite.clear();
    if (writes.length === 0) return;
    b.writing++;
    this.io.commit(writes, [], undefined, true).then(
      () => this.behindWritten(b, null),
      (err: unknown) => this.behindWritten(b, StorageError.from(err, 'group commit')),
    );
  }

  private behindWritten(b: Behind, err: StorageError | null): void {
    b.writing--;
    b.error ??= err;
    if (b.writing > 0 || b.open) return;
    const head = this.head;
    if (head === null) this.promoteBehind();
    else if (head.deferredError) this.settle(head, head.deferredError);
  }

  /** Closes the behind cycle to new requests and writes what joined it last; true once none of its writes run. */
  private closeBehind(b: Behind): boolean {
    if (b.open) {
      b.open = false;
      this.writeBehind(b);
    }
    return b.writing === 0;
  }

  /** The head settled: the cycle behind it, once its writes stopped, becomes the head and syncs (or fails). */
  private promoteBehind(): void {
    const b = this.behind;
    if (b === null || !this.closeBehind(b)) return;
    this.behind = null;
    const cycle = b.cycle;
    this.head = cycle;
    cycle.landed = true;
    this.submittedAt = performance.now();
    if (b.error) return this.settle(cycle, b.error);
    if (cycle.requested.some((log) => log.commitPort.splitsSync)) this.tellWritten(cycle);
    const syncFds = this.syncTargetsOf(cycle);
    if (syncFds.length === 0) return this.settle(cycle, null);
    this.io.commit([], syncFds).then(
      () => this.settle(cycle, null),
      (err: unknown) => this.settle(cycle, StorageError.from(err, 'group commit sync')),
    );
    if (this.next.size > 0) this.schedule();
  }

  /** A split cycle's writes landed (its syncs may still run): its logs let followers read them. */
  private tellWritten(cycle: Cycle): void {
    for (const log of cycle.took) log.commitPort.written();
  }

  /** A split cycle's writes landed on a backend that cannot report it: its logs learn it, then their files are synced in a second submission. */
  private syncWritten(cycle: Cycle): void {
    this.tellWritten(cycle);
    this.io.commit([], this.syncTargetsOf(cycle)).then(
      () => this.settle(cycle, null),
      (err: unknown) => this.settle(cycle, StorageError.from(err, 'group commit sync')),
    );
  }

  /** Captures what the cycle's fdatasyncs make durable (once per cycle: the capture opens the directory's descriptor). */
  private syncTargetsOf(cycle: Cycle): number[] {
    const fds: number[] = [];
    for (const log of cycle.participants) for (const fd of log.commitPort.syncTargets()) fds.push(fd);
    return fds;
  }

  /** Takes the queued requests as this cycle's; waiters of closed logs fail at once. */
  private collect(): Cycle {
    const waiters = this.next;
    this.next = new Map();
    const requestedAt = this.firstRequestAt;
    this.firstRequestAt = null;
    const synced = this.policy.kind === 'always' || this.syncDue;
    const participants = new Set<PartitionLog>();
    const requested: PartitionLog[] = [];
    for (const [log, w] of waiters) {
      if (log.commitPort.isOpen) {
        participants.add(log);
        requested.push(log);
        continue;
      }
      waiters.delete(log);
      w.reject(closedBeforeCommit(log));
    }
    if (this.syncDue) {
      for (const log of this.unsynced) participants.add(log);
      this.unsynced.clear();
      this.syncDue = false;
    }
    return { waiters, participants, took: new Set(), requested, synced, requestedAt, landed: false, deferredError: null };
  }

  private settle(cycle: Cycle, err: StorageError | null, submitted = true): void {
    const behind = this.behind;
    if (err && behind && !this.closeBehind(behind)) {
      // Rolling back now would truncate files the cycle behind is still writing to.
      cycle.deferredError = err;
      return;
    }
    this.head = null;
    if (submitted) {
      this.commits++;
      this.logsCommitted += cycle.participants.size;
      this.lastCommitMs = performance.now() - this.submittedAt;
      this.durations.observe(this.lastCommitMs / 1000);
    }
    if (err) {
      this.fail(cycle, err);
      if (behind) {
        // Its logs that were in this cycle rolled back its writes too: it fails whole, reported once.
        this.behind = null;
        this.fail(behind.cycle, err, false);
      }
    } else {
      this.succeed(cycle);
      if (behind) return this.promoteBehind();
    }
    if (this.next.size > 0 || this.syncDue) return this.runCycle();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private succeed(cycle: Cycle): void {
    for (const log of cycle.participants) log.commitPort.completed(cycle.synced, cycle.took.has(log));
    if (this.policy.kind === 'interval' && !cycle.synced) for (const log of cycle.requested) this.unsynced.add(log);
    for (const w of cycle.waiters.values()) w.resolve();
    if (!cycle.synced) this.startWriteback(cycle);
  }

  /** Bytes an unsynced cycle landed start going to disk a few MiB at a time (commit_port.ts WRITEBACK_BYTES), awaited by nobody. */
  private startWriteback(cycle: Cycle): void {
    const ranges = this.writebackRanges;
    for (const log of cycle.requested) log.commitPort.writeback(ranges);
    if (ranges.length === 0) return;
    // The backend reads the ranges during the call only.
    this.io.startWriteback(ranges);
    ranges.length = 0;
  }

  /** Rejects the cycle's waiters and rolls its logs back; `report`: tell onError (once per failure). */
  private fail(cycle: Cycle, err: StorageError, report = true): void {
    for (const log of cycle.participants) {
      if (!log.commitPort.failed(err)) continue;
      // Data staged behind the failed commit was rolled back with it.
      const queued = this.next.get(log);
      if (queued) {
        this.next.delete(log);
        queued.reject(err);
      }
    }
    // The queue's earliest request may have been among those; the next one starts a fresh wait.
    if (this.next.size === 0) this.firstRequestAt = null;
    for (const w of cycle.waiters.values()) w.reject(err);
    if (report) this.onError(err);
  }
}
