// The reassignment planner's index of who follows whom (online expansion, DESIGN §7), for its
// leader pass: per broker, the positions in its `held` list of the partitions it follows, grouped
// by whether the partition moved and by the partition's leader, each group ascending. The leader
// pass asks, again and again, for the first entry of a broker's list (circularly from a cursor)
// whose leader passes a test; walking the list costs its length (~30k entries at 3M replicas on
// 100 brokers) for every taker that finds nothing, while one binary search per leader it follows
// answers the same question. During the leader pass the held lists, holdings and moved flags are
// fixed and only leaderships change, which `transfer` keeps the index in step with. Pure; any thread.

/** What the index reads of the planner's working assignment; none of it changes while the index lives, but the order within each partition's slots. */
export interface FollowSource {
  readonly offsets: Int32Array;
  /** Broker per replica slot, leader first; `transfer` expects it still to show the old leader. */
  readonly rep: Int32Array;
  /** Per broker, partitions in a fixed order, possibly including some it does not hold (ignored) and some twice. */
  readonly held: readonly (readonly number[])[];
  readonly moved: Uint8Array;
}

export class FollowIndex {
  /** Per (broker, moved flag): leader -> ascending positions in the broker's held list of partitions it follows under that leader. */
  private readonly groups: Map<number, number[]>[];
  /** Per partition, its entries in every holder's list: holder and position, from entryStart[p] to entryStart[p + 1]. */
  private readonly entryStart: Int32Array;
  private readonly entryHolder: Int32Array;
  private readonly entryPos: Int32Array;
  /** Scratch for one query: circular distance * brokers + leader, per leader followed (at most one per broker). */
  private readonly order: Float64Array;
  private readonly brokers: number;

  constructor(private readonly src: FollowSource) {
    const { offsets, rep, held } = src;
    const nb = held.length;
    const np = offsets.length - 1;
    this.brokers = nb;
    this.groups = Array.from({ length: 2 * nb }, () => new Map<number, number[]>());
    let listed = 0;
    for (const list of held) listed += list.length;
    // Entries a broker holds, in list order: partition, holder, position; then sorted by partition.
    const entryP = new Int32Array(listed);
    const entryH = new Int32Array(listed);
    const entryI = new Int32Array(listed);
    this.entryStart = new Int32Array(np + 1);
    let entries = 0;
    // Per moved flag, leader -> positions of the current broker's list (a dense array while the broker's list is read).
    const scratch: (number[] | undefined)[][] = [new Array<number[] | undefined>(nb), new Array<number[] | undefined>(nb)];
    for (let d = 0; d < nb; d++) {
      const list = held[d]!;
      for (let i = 0; i < list.length; i++) {
        const p = list[i]!;
        const first = offsets[p]!;
        let holder = false;
        for (let s = first; s < offsets[p + 1]! && !holder; s++) holder = rep[s] === d;
        if (!holder) continue;
        entryP[entries] = p;
        entryH[entries] = d;
        entryI[entries++] = i;
        this.entryStart[p + 1]!++;
        const leader = rep[first]!;
        if (leader === d) continue;
        // Positions come in ascending order here, so a push keeps each group sorted.
        const byLeader = scratch[src.moved[p]!]!;
        const g = byLeader[leader];
        if (g === undefined) byLeader[leader] = [i];
        else g.push(i);
      }
      for (const movedFlag of [0, 1]) {
        const byLeader = scratch[movedFlag]!;
        for (let leader = 0; leader < nb; leader++) {
          const g = byLeader[leader];
          if (g === undefined) continue;
          this.groups[2 * d + movedFlag]!.set(leader, g);
          byLeader[leader] = undefined;
        }
      }
    }
    for (let p = 0; p < np; p++) this.entryStart[p + 1]! += this.entryStart[p]!;
    const fill = this.entryStart.slice(0, np);
    this.entryHolder = new Int32Array(entries);
    this.entryPos = new Int32Array(entries);
    for (let e = 0; e < entries; e++) {
      const at = fill[entryP[e]!]!++;
      this.entryHolder[at] = entryH[e]!;
      this.entryPos[at] = entryI[e]!;
    }
    this.order = new Float64Array(nb);
  }

  /** The group of d's entries for p's moved flag under `leader`, created empty if there is none. */
  private group(d: number, p: number, leader: number): number[] {
    const byLeader = this.groups[2 * d + this.src.moved[p]!]!;
    let g = byLeader.get(leader);
    if (g === undefined) {
      g = [];
      byLeader.set(leader, g);
    }
    return g;
  }

  /**
   * Calls visit(leader, partition) for d's followed partitions, moved ones first, each in the
   * circular order of d's list from `start`, until visit says stop; returns the position it
   * stopped at, or -1. Only each leader's first entry is offered (per moved flag): a visit that
   * depends on the leader alone, as the leader pass's do, decides the same for the others.
   */
  firstFollowed(d: number, start: number, visit: (leader: number, p: number) => boolean): number {
    const list = this.src.held[d]!;
    const len = list.length;
    const nb = this.brokers;
    for (const movedFlag of [1, 0]) {
      const byLeader = this.groups[2 * d + movedFlag]!;
      let n = 0;
      for (const [leader, positions] of byLeader) {
        const k = lowerBound(positions, start);
        const pos = k < positions.length ? positions[k]! : positions[0]!;
        this.order[n++] = ((pos - start + len) % len) * nb + leader;
      }
      const order = this.order.subarray(0, n).sort();
      for (let j = 0; j < n; j++) {
        const leader = order[j]! % nb;
        const pos = (start + (order[j]! - leader) / nb) % len;
        if (visit(leader, list[pos]!)) return pos;
      }
    }
    return -1;
  }

  /** Moves p's entries from its current leader's groups to `to`'s; call before the slots change. */
  transfer(p: number, to: number): void {
    const from = this.src.rep[this.src.offsets[p]!]!;
    for (let e = this.entryStart[p]!; e < this.entryStart[p + 1]!; e++) {
      const h = this.entryHolder[e]!;
      const pos = this.entryPos[e]!;
      if (h !== from) {
        const g = this.group(h, p, from);
        g.splice(lowerBound(g, pos), 1);
        if (g.length === 0) this.groups[2 * h + this.src.moved[p]!]!.delete(from);
      }
      if (h !== to) {
        const g = this.group(h, p, to);
        g.splice(lowerBound(g, pos), 0, pos);
      }
    }
  }
}

/** The first index of sorted `xs` whose value is at least x (xs.length if none). */
function lowerBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
