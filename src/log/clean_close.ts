// Closes many partition logs together at a shard's shutdown (on the shard worker). Each log's
// clean close (PartitionLog.stageClose) is a few sync steps; instead of one partition after
// another, up to MAX_CLOSES_IN_FLIGHT logs run their steps at once, each step's syncs submitted as one
// IoBackend commit, so the disk sees many syncs together (one io_uring submission per step, or
// concurrent fdatasyncs on the libuv pool) rather than one at a time. The logs closed cleanly
// come back as the entries of the shard's clean-shutdown record (clean_shutdown.ts), which the
// caller writes once they are all durable.
// Invariants: a log's next step starts only after its previous step's syncs succeeded; a failed
// sync abandons only that log's close (it reopens with a rescan), never the others'. The number of
// descriptors held open for staged files is bounded by the lanes (at most MAX_CLOSES_IN_FLIGHT).
import { StorageError, type IoBackend } from './io_backend.js';
import type { CleanCloseEntry } from './clean_shutdown.js';
import type { PartitionLog } from './partition_log.js';

/** Staged descriptors one closing log holds at most: its directory, index and state files. */
const CLOSE_FDS = 7;

/**
 * Logs closing at once on one shard, at most. Each takes ~9 ring operations per step: 64 stays far
 * below the native ring's 4096 operations. Its descriptors (64 x CLOSE_FDS, ~450) are more than a
 * low descriptor limit leaves once partitions fill the budget, so the broker passes closeLanesFor().
 */
export const MAX_CLOSES_IN_FLIGHT = 64;

/**
 * Lanes per shard that `spareDescriptors` (free in the process-wide budget at shutdown, shared by
 * `shards` shards closing at once) can carry without meeting EMFILE: at least one, so a full
 * budget still closes cleanly, one log at a time.
 */
export function closeLanesFor(spareDescriptors: number, shards: number): number {
  return Math.max(1, Math.min(MAX_CLOSES_IN_FLIGHT, Math.floor(spareDescriptors / Math.max(1, shards) / CLOSE_FDS)));
}

export async function closeLogsTogether(
  logs: readonly PartitionLog[],
  io: IoBackend,
  onError: (err: StorageError) => void,
  lanes = MAX_CLOSES_IN_FLIGHT,
): Promise<CleanCloseEntry[]> {
  const entries: CleanCloseEntry[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < logs.length) {
      const log = logs[next++]!;
      try {
        await closeOne(log, io);
        if (log.cleanCloseEntry) entries.push(log.cleanCloseEntry);
      } catch (err) {
        onError(StorageError.from(err, `close ${log.dir}`));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, logs.length) }, lane));
  return entries;
}

async function closeOne(log: PartitionLog, io: IoBackend): Promise<void> {
  for (let step = log.stageClose(); step !== null; ) {
    const current = step;
    try {
      await io.commit([], current.fds);
      step = current.next();
    } catch (err) {
      current.abandon();
      throw err;
    }
  }
}
