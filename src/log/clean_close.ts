// Closes many partition logs together at a shard's shutdown (on the shard worker). Each log's
// clean close (PartitionLog.stageClose) is a few sync steps; instead of one partition after
// another, up to MAX_CLOSES_IN_FLIGHT logs run their steps at once, each step's syncs submitted as one
// IoBackend commit, so the disk sees many syncs together (one io_uring submission per step, or
// concurrent fdatasyncs on the libuv pool) rather than one at a time.
// Invariants: a log's next step starts only after its previous step's syncs succeeded; a failed
// sync abandons only that log's close (it reopens with a rescan), never the others'. The number of
// descriptors held open for staged files is bounded by MAX_CLOSES_IN_FLIGHT.
import { StorageError, type IoBackend } from './io_backend.js';
import type { PartitionLog } from './partition_log.js';

/**
 * Logs closing at once on one shard. Each holds up to ~7 staged descriptors (its directory, index
 * and state files) and ~9 ring operations per step: 64 keeps a shard's extra descriptors near 450,
 * inside the descriptor budget's reserve, and far below the native ring's 4096 operations.
 */
const MAX_CLOSES_IN_FLIGHT = 64;

export async function closeLogsTogether(
  logs: readonly PartitionLog[],
  io: IoBackend,
  onError: (err: StorageError) => void,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < logs.length) {
      const log = logs[next++]!;
      try {
        await closeOne(log, io);
      } catch (err) {
        onError(StorageError.from(err, `close ${log.dir}`));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_CLOSES_IN_FLIGHT, logs.length) }, lane));
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
