// The narrow interface between a PartitionLog and the shard's GroupCommitter: how staged appends
// are handed over for one group commit and how the outcome comes back. Internal to src/log: the
// partition actor never calls these; it calls GroupCommitter.commit(log).
// Protocol per commit cycle: take() (and, when the cycle syncs, syncTargets()) before io.commit,
// then exactly one of completed() / failed() after it settles. A cycle that took the data of a
// log that splitsSync also calls written() once the writes landed, while the syncs still run: from
// the backend's writes-landed report within the one submission, or, on a backend without it,
// between a write-only submission and a sync-only one (syncTargets() then taken after
// written()). A failed() after written() strands the log (PartitionLog.failed). At most two cycles
// are in flight per log: a second take() may come once the first cycle's writes landed
// (GroupCommitter's cycle behind the head); its written(), completed() or failed() come only
// after the first's outcome.
import type { StorageError, WritebackRange, WriteOp } from './io_backend.js';

export interface CommitPort {
  /** False once the log is closing, closed or offline: waiters for it must fail, its staged data is discarded. */
  readonly isOpen: boolean;
  /** Its commits should call written() between their writes landing and their syncs finishing (PartitionLog.earlyReads). */
  readonly splitsSync: boolean;
  /** Moves everything staged in flight; null when nothing is staged. */
  take(): WriteOp[] | null;
  /** Moves what was staged since into the last area taken (whose writes may still run): its writes; null when nothing is staged. */
  takeMore(): WriteOp[] | null;
  /** Files whose written or in-flight bytes are not yet durable (captured for this cycle's fdatasync, before or after written()). */
  syncTargets(): number[];
  /** The cycle's writes landed and its sync is still to come: in-flight data becomes readable by followers. */
  written(): void;
  /**
   * The cycle's writes (and syncs, when `synced`) succeeded: when it `took` this log's staged data,
   * that in-flight data becomes durable and readable. A log in the cycle that it took nothing from
   * (a drain, a sync-only participant) may have data in flight in the cycle behind: that stays in
   * flight until its own cycle's outcome.
   */
  completed(synced: boolean, took: boolean): void;
  /**
   * The cycle failed: in-flight and later staged data are rolled back. Returns false when the log
   * had nothing in flight (its later appends stand), true when its staged data was discarded.
   */
  failed(err: StorageError): boolean;
  /**
   * After a successful cycle that did not sync: appends to `into` the range of its active file
   * that has landed since its last sync or writeback, once that reaches WRITEBACK_BYTES, and counts
   * it as started.
   */
  writeback(into: WritebackRange[]): void;
}

/**
 * Unsynced bytes a log lets pile up in its active segment before it asks the kernel to start
 * writing them back. Left to the kernel's flusher, a 1 GiB segment under --flush never reached its
 * roll mostly dirty, and the seal's fdatasync then stalled every append for ~250 ms (ext4 makes
 * appends wait for the journal commit that fdatasync forces, which writes those pages first).
 */
export const WRITEBACK_BYTES = 8 << 20;
