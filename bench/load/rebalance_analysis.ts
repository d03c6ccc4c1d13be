// What a rebalance did to consumption, from the deliveries alone (bench process, main thread;
// pure apart from the log's appends). The rebalance bench records every message a group member
// hands to its application: when (performance.now()), which partition, which member, and the send
// time the producer stamped into it. From that log: who owned each partition before and after
// (the single member delivering it in a window), which partitions kept their owner and which
// moved, the longest consumption gap of each, and when a moved partition's new owner first
// delivered.
// Invariants: entries are appended in time order (one thread, one monotonic clock); the log is
// bounded by its capacity and counts what it had to drop.

/** Owner value: no member delivered the partition in the window. */
export const NO_OWNER = -1;
/** Owner value: more than one member delivered it (a handover inside the window). */
export const SEVERAL_OWNERS = -2;

export class DeliveryLog {
  readonly at: Float64Array;
  readonly stamp: Float64Array;
  readonly partition: Int32Array;
  readonly member: Int32Array;
  length = 0;
  dropped = 0;

  constructor(readonly capacity: number) {
    this.at = new Float64Array(capacity);
    this.stamp = new Float64Array(capacity);
    this.partition = new Int32Array(capacity);
    this.member = new Int32Array(capacity);
  }

  add(at: number, partition: number, member: number, stamp: number): void {
    const i = this.length;
    if (i === this.capacity) {
      this.dropped++;
      return;
    }
    this.at[i] = at;
    this.stamp[i] = stamp;
    this.partition[i] = partition;
    this.member[i] = member;
    this.length = i + 1;
  }

  /** Index of the first entry at or after time t (binary search; entries are in time order). */
  firstAtOrAfter(t: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.at[mid] as number) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Per partition, the member that delivered it in [from, to): a member index, NO_OWNER or SEVERAL_OWNERS. */
export function ownersIn(log: DeliveryLog, partitions: number, from: number, to: number): Int32Array {
  const owners = new Int32Array(partitions).fill(NO_OWNER);
  for (let i = log.firstAtOrAfter(from); i < log.length && (log.at[i] as number) < to; i++) {
    const p = log.partition[i] as number;
    const m = log.member[i] as number;
    const o = owners[p] as number;
    if (o === NO_OWNER) owners[p] = m;
    else if (o !== m) owners[p] = SEVERAL_OWNERS;
  }
  return owners;
}

/**
 * Every partition has exactly one owner, exactly `members` distinct members own some, and the
 * load is balanced (owned counts differ by at most one), as both assignors leave a group at rest.
 */
export function isSettled(owners: Int32Array, members: number): boolean {
  const counts = new Map<number, number>();
  for (const o of owners) {
    if (o < 0) return false;
    counts.set(o, (counts.get(o) ?? 0) + 1);
  }
  if (counts.size !== members) return false;
  const n = [...counts.values()];
  return Math.max(...n) - Math.min(...n) <= 1;
}

/**
 * Per partition, the longest time without a delivery in (from, to]: between consecutive
 * deliveries, from the last delivery at or before `from` (or `from` itself) to the first after
 * it, and from the last delivery to `to` (a partition that stopped still counts). Any member's.
 */
export function maxGaps(log: DeliveryLog, partitions: number, from: number, to: number): Float64Array {
  const prev = new Float64Array(partitions).fill(from);
  const gaps = new Float64Array(partitions);
  // Deliveries before the window only set where each partition's first gap starts.
  const found = new Uint8Array(partitions);
  let missing = partitions;
  for (let i = log.firstAtOrAfter(from) - 1; i >= 0 && missing > 0; i--) {
    const p = log.partition[i] as number;
    if (found[p] === 1) continue;
    found[p] = 1;
    missing--;
    prev[p] = log.at[i] as number;
  }
  for (let i = log.firstAtOrAfter(from); i < log.length && (log.at[i] as number) <= to; i++) {
    const p = log.partition[i] as number;
    const at = log.at[i] as number;
    gaps[p] = Math.max(gaps[p] as number, at - (prev[p] as number));
    prev[p] = at;
  }
  for (let p = 0; p < partitions; p++) gaps[p] = Math.max(gaps[p] as number, to - (prev[p] as number));
  return gaps;
}

/**
 * The gap in partition p's deliveries across time t: from its last delivery at or before t to its
 * first after t. NaN when it has none on either side.
 */
export function gapAcross(log: DeliveryLog, p: number, t: number): number {
  const at = log.firstAtOrAfter(t);
  let before = NaN;
  for (let i = at - 1; i >= 0; i--) {
    if (log.partition[i] === p) {
      before = log.at[i] as number;
      break;
    }
  }
  // Entries exactly at t count as before it.
  for (let i = at; i < log.length; i++) {
    if (log.partition[i] !== p) continue;
    const x = log.at[i] as number;
    if (x === t) before = x;
    else return x - before;
  }
  return NaN;
}

/** Per partition, the largest send-to-delivery latency of a delivery in [from, to], or 0. */
export function maxLatencies(log: DeliveryLog, partitions: number, from: number, to: number): Float64Array {
  const out = new Float64Array(partitions);
  for (let i = log.firstAtOrAfter(from); i < log.length && (log.at[i] as number) <= to; i++) {
    const p = log.partition[i] as number;
    out[p] = Math.max(out[p] as number, (log.at[i] as number) - (log.stamp[i] as number));
  }
  return out;
}

export interface MovedPartition {
  readonly partition: number;
  readonly from: number;
  readonly to: number;
  /** First delivery by the new owner after the join. */
  readonly firstAt: number;
  /** Last delivery by any other member before firstAt (NaN if none). */
  readonly lastOldAt: number;
}

/** For each partition whose owner changed, the new owner's first delivery after `joinAt` and the old owner's last before it. */
export function movedPartitions(log: DeliveryLog, before: Int32Array, after: Int32Array, joinAt: number): MovedPartition[] {
  const out: MovedPartition[] = [];
  for (let p = 0; p < before.length; p++) {
    const from = before[p] as number;
    const to = after[p] as number;
    if (from < 0 || to < 0 || from === to) continue;
    let firstAt = NaN;
    for (let i = log.firstAtOrAfter(joinAt); i < log.length; i++) {
      if (log.partition[i] === p && log.member[i] === to) {
        firstAt = log.at[i] as number;
        break;
      }
    }
    let lastOldAt = NaN;
    for (let i = (Number.isNaN(firstAt) ? log.length : log.firstAtOrAfter(firstAt)) - 1; i >= 0; i--) {
      if (log.partition[i] === p && log.member[i] !== to) {
        lastOldAt = log.at[i] as number;
        break;
      }
    }
    out.push({ partition: p, from, to, firstAt, lastOldAt });
  }
  return out;
}

export interface RebalanceFigures {
  /** Partitions with the same single owner before and after. */
  readonly kept: number;
  readonly moved: number;
  /** Partitions without a single owner in the before or after window. */
  readonly unclassified: number;
  /** Longest delivery gap of any partition in the baseline window before the join. */
  readonly baselineGapMs: number;
  /** Longest delivery gap of a kept partition from the join to the end. */
  readonly keptGapMs: number;
  /**
   * Longest gap of a kept partition across the moment its owner's client changed its assignment
   * (revoked something, or began an eager rejoin): the pause the rebalance itself caused there.
   * NaN when no kept partition's owner changed.
   */
  readonly keptPauseMs: number;
  readonly baselineLatencyMs: number;
  /** Largest send-to-delivery latency on a kept partition after the join. */
  readonly keptLatencyMs: number;
  /** Join -> first delivery by the new owner: the slowest moved partition, and the median one. */
  readonly movedFirstMs: number;
  readonly movedFirstMedianMs: number;
  /** Old owner's last delivery -> new owner's first: the longest. */
  readonly movedGapMs: number;
  readonly movedList: readonly MovedPartition[];
}

export interface RebalanceWindows {
  readonly partitions: number;
  readonly baselineFrom: number;
  readonly joinAt: number;
  /** The after-window [settledFrom, end) decides the final owners. */
  readonly settledFrom: number;
  readonly end: number;
  /** Per member: when its client first changed its assignment after the join (NaN: never). */
  readonly changedAt: Float64Array;
}

/** The largest value that is not NaN; NaN when there is none. */
export function maxOf(xs: Iterable<number>): number {
  let m = NaN;
  for (const x of xs) if (!Number.isNaN(x) && (Number.isNaN(m) || x > m)) m = x;
  return m;
}

function medianOf(xs: readonly number[]): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function analyzeRebalance(log: DeliveryLog, w: RebalanceWindows): RebalanceFigures {
  const before = ownersIn(log, w.partitions, w.baselineFrom, w.joinAt);
  const after = ownersIn(log, w.partitions, w.settledFrom, w.end);
  const baseGaps = maxGaps(log, w.partitions, w.baselineFrom, w.joinAt);
  const gaps = maxGaps(log, w.partitions, w.joinAt, w.end);
  const baseLat = maxLatencies(log, w.partitions, w.baselineFrom, w.joinAt);
  const lat = maxLatencies(log, w.partitions, w.joinAt, w.end);
  const kept: number[] = [];
  let unclassified = 0;
  for (let p = 0; p < w.partitions; p++) {
    if ((before[p] as number) < 0 || (after[p] as number) < 0) unclassified++;
    else if (before[p] === after[p]) kept.push(p);
  }
  const moved = movedPartitions(log, before, after, w.joinAt);
  const firsts = moved.map((m) => m.firstAt - w.joinAt);
  const pauses = kept.map((p) => {
    const t = w.changedAt[before[p] as number];
    return t === undefined || Number.isNaN(t) ? NaN : gapAcross(log, p, t);
  });
  return {
    kept: kept.length, moved: moved.length, unclassified,
    baselineGapMs: maxOf(baseGaps), keptGapMs: maxOf(kept.map((p) => gaps[p] as number)), keptPauseMs: maxOf(pauses),
    baselineLatencyMs: maxOf(baseLat), keptLatencyMs: maxOf(kept.map((p) => lat[p] as number)),
    movedFirstMs: maxOf(firsts), movedFirstMedianMs: medianOf(firsts),
    movedGapMs: maxOf(moved.map((m) => m.firstAt - m.lastOldAt)),
    movedList: moved,
  };
}
