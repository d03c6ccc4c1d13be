// Recent log-end offsets of the partitions this broker hosts (main thread, pure: each sample
// brings its own clock reading). Fed whenever the admin HTTP reads the shards' partition figures
// (a /metrics scrape, the console's /v1/topics and /v1/groups); from it come each partition's
// append rate and a group's lag in seconds.
//
// Lag in seconds is the time between the log end passing the group's committed offset and the
// log end's latest move: the append-time distance between the next record the group reads and
// the newest record, which is what `sluice group describe` measures from record timestamps.
// Only changes of the log end are kept, so a partition that stopped receiving keeps its history.
// Accuracy is the sampling interval; a committed offset older than the whole history gives a
// lower bound, marked as such.
//
// Bounded: at most MAX_TRACKED_PARTITIONS partitions and MAX_SAMPLES changes each; a partition
// absent from a sample (closed, moved away) is forgotten.

/** Partitions tracked; further ones get no rate or lag in seconds. */
export const MAX_TRACKED_PARTITIONS = 20_000;
/** Log-end changes kept per partition (the oldest goes first). */
export const MAX_SAMPLES = 64;
/** Samples closer together than this are skipped, so frequent readers do not shorten the history. */
export const MIN_SAMPLE_INTERVAL_MS = 1000;
/** The append rate is measured over this much of the latest history. */
export const RATE_WINDOW_MS = 10_000;

export interface LogEndReading {
  readonly topic: string;
  readonly partition: number;
  readonly logEndOffset: number;
}

export interface LagSeconds {
  readonly seconds: number;
  /** The committed offset predates the history: the true lag is at least `seconds`. */
  readonly atLeast: boolean;
}

interface History {
  /** Times at which the log end was first seen at `ends[i]`; both ascending. */
  readonly at: number[];
  readonly ends: number[];
}

function keyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export class OffsetHistory {
  private histories = new Map<string, History>();
  private lastSampleMs = Number.NEGATIVE_INFINITY;

  /** Records one reading of every hosted partition at `nowMs`; returns false when skipped as too soon. */
  record(readings: Iterable<LogEndReading>, nowMs: number): boolean {
    if (nowMs - this.lastSampleMs < MIN_SAMPLE_INTERVAL_MS) return false;
    this.lastSampleMs = nowMs;
    const next = new Map<string, History>();
    for (const r of readings) {
      const key = keyOf(r.topic, r.partition);
      const h = this.histories.get(key) ?? (next.size < MAX_TRACKED_PARTITIONS ? { at: [], ends: [] } : undefined);
      if (h === undefined) continue;
      const last = h.ends[h.ends.length - 1];
      // A log end that went back (truncation, a recreated partition) starts the history over.
      if (last !== undefined && r.logEndOffset < last) {
        h.at.length = 0;
        h.ends.length = 0;
      }
      if (h.ends.length === 0 || r.logEndOffset !== h.ends[h.ends.length - 1]) {
        h.at.push(nowMs);
        h.ends.push(r.logEndOffset);
        if (h.at.length > MAX_SAMPLES) {
          h.at.shift();
          h.ends.shift();
        }
      }
      next.set(key, h);
    }
    this.histories = next;
    return true;
  }

  /** Records appended per second over the last RATE_WINDOW_MS; null before a second of history. */
  messagesPerSecond(topic: string, partition: number, nowMs: number): number | null {
    const h = this.histories.get(keyOf(topic, partition));
    if (h === undefined) return null;
    const since = Math.max(h.at[0]!, nowMs - RATE_WINDOW_MS);
    if (nowMs - since < MIN_SAMPLE_INTERVAL_MS) return null;
    // The log end in force at `since`: that of the latest change at or before it.
    let from = h.ends[0]!;
    for (let i = 0; i < h.at.length && h.at[i]! <= since; i++) from = h.ends[i]!;
    return ((h.ends[h.ends.length - 1]! - from) * 1000) / (nowMs - since);
  }

  /** How far behind the log end, in append time, a group committed at `committed` is; null when untracked. */
  lagSeconds(topic: string, partition: number, committed: number): LagSeconds | null {
    const h = this.histories.get(keyOf(topic, partition));
    if (h === undefined) return null;
    const n = h.ends.length;
    const newest = h.at[n - 1]!;
    if (committed >= h.ends[n - 1]!) return { seconds: 0, atLeast: false };
    let passed = 0;
    while (h.ends[passed]! <= committed) passed++;
    return { seconds: (newest - h.at[passed]!) / 1000, atLeast: passed === 0 };
  }

  get trackedPartitions(): number {
    return this.histories.size;
  }
}
