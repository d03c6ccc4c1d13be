// The reassignment planner (online expansion, DESIGN §7, issue 15 item 2): from the current
// assignment to a target where replica and preferred-leader counts per broker sit within their
// capacity bands, each partition's replicas on distinct racks where there are enough racks, and
// brokers being removed are empty, moving as few replicas as it can. Sticky: it starts from the
// current lists and changes only what breaks a band or a rack rule, so a balanced, rack-correct
// cluster gets an empty plan and planning again on a plan's result changes nothing. Replicas go
// from brokers above their band to brokers below it (same rack first, coldest partition first);
// where no direct move fits, a shortest chain of moves through brokers inside their bands does.
// Leaders are balanced afterwards by reordering replica lists, partitions that move anyway
// first, so data moves only for replica balance. Dense typed arrays, no per-replica objects:
// 1M replicas on 1,000 brokers plan in seconds on one thread. Pure and deterministic (ties go to
// the lower index, never to chance); any thread.
import type { PlanInput } from './model.js';
import { computeTargets, indexCluster, type IndexedCluster, type Targets } from './planner_cluster.js';
import { FollowIndex } from './planner_follow.js';
import { buildPlan, holds, type ReassignmentPlan } from './planner_report.js';

export { naiveReassignment } from './planner_naive.js';
export type { BrokerLoad, PlanReport, ReassignmentPlan } from './planner_report.js';

export interface PlannerOptions {
  /** Balance preferred leaders too (default true); false leaves each list's order as the moves leave it. */
  readonly balanceLeaders?: boolean;
  /**
   * Partition checks the chain search may spend over the whole plan (default 20M) when no direct
   * move fits: it bounds the time on inputs no plan can balance, at the price of a report saying
   * unbalanced.
   */
  readonly searchBudget?: number;
}

const DEFAULT_SEARCH_BUDGET = 20_000_000;
/** Movable partitions findMovable weighs for their leadership before settling for the coldest. */
const LEADER_LOOKAHEAD = 8;

/** The mutable assignment the planner works on, with what it needs to pick moves fast. */
class Work {
  readonly rep: Int32Array;
  readonly count: Int32Array;
  readonly leaders: Int32Array;
  /** Partitions each broker holds or held, coldest first as of the start (entries it no longer holds are skipped). */
  readonly held: number[][];
  /** Where each broker's list starts to matter: entries before it are gone for good. */
  readonly cursor: Int32Array;
  /** 1 once a partition's replica set changed: a leader change there costs no extra election entry. */
  readonly moved: Uint8Array;
  /** Partition checks made by findMovable so far. */
  checks = 0;

  constructor(readonly c: IndexedCluster, readonly t: Targets, input: PlanInput) {
    const nb = c.brokerIds.length;
    const np = c.offsets.length - 1;
    this.rep = c.replicas.slice();
    this.count = new Int32Array(nb);
    this.leaders = new Int32Array(nb);
    this.held = Array.from({ length: nb }, () => []);
    this.cursor = new Int32Array(nb);
    this.moved = new Uint8Array(np);
    const size = Float64Array.from(input.partitions, (p) => p.sizeBytes);
    const rate = Float64Array.from(input.partitions, (p) => p.bytesInPerSec);
    const cold = Int32Array.from({ length: np }, (_, p) => p).sort((a, b) => size[a]! - size[b]! || rate[a]! - rate[b]! || a - b);
    for (const p of cold) {
      for (let s = c.offsets[p]!; s < c.offsets[p + 1]!; s++) {
        this.held[this.rep[s]!]!.push(p);
        this.count[this.rep[s]!]!++;
      }
      this.leaders[this.rep[c.offsets[p]!]!]!++;
    }
  }

  slotOf(p: number, b: number): number {
    for (let s = this.c.offsets[p]!; s < this.c.offsets[p + 1]!; s++) if (this.rep[s] === b) return s;
    return -1;
  }

  /**
   * Whether p's replica on `from` may go to `to`: `to` does not hold p, and where p needs a rack
   * per replica, `to` is in `from`'s rack (the racks stay as they are) or in one p does not use.
   * `repair` drops the first case: the replica must land in a rack no other replica of p uses.
   */
  canMove(p: number, from: number, to: number, repair = false): boolean {
    const c = this.c;
    const first = c.offsets[p]!;
    const end = c.offsets[p + 1]!;
    const rack = c.rackOf[to]!;
    const racked = end - first <= c.racksAvailable && (repair || c.rackOf[from] !== rack);
    for (let s = first; s < end; s++) {
      const b = this.rep[s]!;
      if (b === to) return false;
      if (racked && b !== from && c.rackOf[b] === rack) return false;
    }
    return true;
  }

  move(p: number, from: number, to: number): void {
    const s = this.slotOf(p, from);
    this.rep[s] = to;
    this.count[from]!--;
    this.count[to]!++;
    if (s === this.c.offsets[p]) {
      this.leaders[from]!--;
      this.leaders[to]!++;
    }
    this.held[to]!.push(p);
    this.moved[p] = 1;
  }

  /**
   * What moving p's replica from `from` to `to` does to leader balance: 0 when `from` only
   * follows p; when it leads, the leadership goes along, 1 if that helps the leader bands
   * (`from` above its band or `to` below) more than it hurts, else -1: an election that gains
   * nothing is worse than none.
   */
  leaderEffect(p: number, from: number, to: number): number {
    if (this.rep[this.c.offsets[p]!] !== from) return 0;
    const { leaders, t } = this;
    const gain = (leaders[from]! > t.leaderHigh[from]! ? 1 : leaders[from]! <= t.leaderLow[from]! ? -1 : 0) +
      (leaders[to]! < t.leaderLow[to]! ? 1 : leaders[to]! >= t.leaderHigh[to]! ? -1 : 0);
    return gain > 0 ? 1 : -1;
  }

  /**
   * The coldest partition `from` holds that may go to `to`, or -1; among the first few that may,
   * one whose leadership should go along (or stay) is worth a slightly warmer partition, since
   * every leader moved the wrong way costs an election later to undo.
   */
  findMovable(from: number, to: number): number {
    const list = this.held[from]!;
    let best = -1;
    let bestEffect = -2;
    let candidates = 0;
    for (let i = this.cursor[from]!; i < list.length && candidates < LEADER_LOOKAHEAD; i++) {
      const p = list[i]!;
      this.checks++;
      if (this.slotOf(p, from) < 0) {
        if (i === this.cursor[from]) this.cursor[from] = i + 1;
        continue;
      }
      if (!this.canMove(p, from, to)) continue;
      candidates++;
      const effect = this.leaderEffect(p, from, to);
      if (effect > bestEffect) {
        best = p;
        bestEffect = effect;
        if (effect === 1) break;
      }
    }
    return best;
  }

  /** Makes broker `b` (holding p) p's preferred leader; the others keep their order behind it. */
  lead(p: number, b: number): void {
    const first = this.c.offsets[p]!;
    const old = this.rep[first]!;
    for (let s = this.slotOf(p, b); s > first; s--) this.rep[s] = this.rep[s - 1]!;
    this.rep[first] = b;
    this.leaders[old]!--;
    this.leaders[b]!++;
  }
}

/**
 * The moves no plan can avoid, before any balancing: every replica on a broker being removed,
 * and every replica beyond the first in a rack (of two sharing a rack, the leader stays, else
 * the one on the broker further above its band). All leavers are chosen first, so that a
 * destination can count the replicas still to leave it; each goes to the broker furthest below
 * its band after those departures, in the leaver's rack among equals. A drained broker's
 * replicas placed this way cannot be stranded by balancing moves that took the only brokers
 * they could have gone to.
 */
function evacuate(w: Work): void {
  const { c, t, rep } = w;
  const nb = c.brokerIds.length;
  const seen = new Int32Array(c.rackNames.length).fill(-1);
  /** (partition, slot) pairs. */
  const leaving: number[] = [];
  const pending = new Int32Array(nb);
  for (let p = 0; p + 1 < c.offsets.length; p++) {
    const first = c.offsets[p]!;
    const end = c.offsets[p + 1]!;
    const racked = end - first <= c.racksAvailable;
    for (let s = first; s < end; s++) {
      if (c.removing[rep[s]!] === 1) {
        leaving.push(p, s);
        continue;
      }
      if (!racked) continue;
      const r = c.rackOf[rep[s]!]!;
      const other = seen[r]!;
      seen[r] = s;
      if (other < 0) continue;
      const over = (x: number): number => w.count[rep[x]!]! - t.replicaHigh[rep[x]!]!;
      const leave = other === first ? s : s === first ? other : over(s) >= over(other) ? s : other;
      seen[r] = leave === s ? other : s;
      leaving.push(p, leave);
      pending[rep[leave]!]!++;
    }
    for (let s = first; s < end; s++) seen[c.rackOf[rep[s]!]!] = -1;
  }
  for (let i = 0; i < leaving.length; i += 2) {
    const p = leaving[i]!;
    const from = rep[leaving[i + 1]!]!;
    pending[from]!--;
    let best = -1;
    let bestScore = 0;
    for (let b = 0; b < nb; b++) {
      if (c.removing[b] === 1 || !w.canMove(p, from, b, true)) continue;
      // Furthest below the band first (twice the shortfall, so a rack match only breaks ties).
      const score = 2 * (t.replicaLow[b]! - w.count[b]! + pending[b]!) + (c.rackOf[b] === c.rackOf[from] ? 1 : 0);
      if (best < 0 || score > bestScore) {
        best = b;
        bestScore = score;
      }
    }
    if (best >= 0) w.move(p, from, best);
  }
}

/**
 * Counts against bands, as the greedy sees them: while some broker is above its band, only such
 * brokers give and only brokers below their band (or, when none is, with room) take; once none
 * is above, brokers above their floor give to those below it. Each move then shrinks
 * max(surplus, shortfall) by one, which is why the direct moves alone meet the lower bound.
 */
class Bands {
  above = 0;
  below = 0;

  constructor(private readonly count: Int32Array, private readonly low: Int32Array, private readonly high: Int32Array) {
    for (let b = 0; b < count.length; b++) this.account(b, 1);
  }

  /** Adds (sign 1) or removes (sign -1) broker b's part of the surplus and shortfall. */
  account(b: number, sign: number): void {
    this.above += sign * Math.max(0, this.count[b]! - this.high[b]!);
    this.below += sign * Math.max(0, this.low[b]! - this.count[b]!);
  }

  giveScore(b: number): number {
    return this.above > 0 ? this.count[b]! - this.high[b]! : this.count[b]! - this.low[b]!;
  }

  takeScore(b: number): number {
    return this.below > 0 ? this.low[b]! - this.count[b]! : this.high[b]! - this.count[b]!;
  }

  get done(): boolean {
    return this.above === 0 && this.below === 0;
  }
}

/**
 * A shortest chain giver -> x1 -> ... -> taker, each link a movable partition (or for leaders, a
 * leadership transfer), found backwards from the taker breadth first; distinct partitions, so
 * the links do not disturb each other. `links(y, visit)` offers y's predecessors.
 */
function findChain(
  nb: number, taker: number, isGiver: (b: number) => boolean, canRelay: (b: number) => boolean,
  links: (y: number, visit: (x: number, p: number) => boolean) => void,
): { from: number; p: number }[] | null {
  const via = new Int32Array(nb).fill(-1);
  const next = new Int32Array(nb).fill(-1);
  const seen = new Uint8Array(nb);
  seen[taker] = 1;
  let layer = [taker];
  while (layer.length > 0) {
    const nextLayer: number[] = [];
    for (const y of layer) {
      let giver = -1;
      links(y, (x, p) => {
        if (seen[x] === 1) return false;
        const gives = isGiver(x);
        if (!gives && !canRelay(x)) return false;
        seen[x] = 1;
        via[x] = p;
        next[x] = y;
        nextLayer.push(x);
        if (gives) giver = x;
        return giver >= 0;
      });
      if (giver >= 0) {
        const chain: { from: number; p: number }[] = [];
        const used = new Set<number>();
        for (let x = giver; x !== taker; x = next[x]!) {
          if (used.has(via[x]!)) return null;
          used.add(via[x]!);
          chain.push({ from: x, p: via[x]! });
        }
        return chain;
      }
    }
    layer = nextLayer;
  }
  return null;
}

/** Whether a chain reached one of `blocked` (the first it can), marking those before it stuck. */
function firstChain(blocked: readonly number[], throughChain: (d: number) => boolean, stuck: Uint8Array): boolean {
  for (const d of blocked) {
    if (throughChain(d)) return true;
    stuck[d] = 1;
  }
  return false;
}

/** This round's takers, furthest below their band first (the lower index among equals). */
function takersByScore(bands: Bands, nb: number, skip: Uint8Array): number[] {
  const out: number[] = [];
  for (let b = 0; b < nb; b++) if (skip[b] === 0 && bands.takeScore(b) > 0) out.push(b);
  return out.sort((a, b) => bands.takeScore(b) - bands.takeScore(a) || a - b);
}

/**
 * In rounds: each taker receives one replica per round, from the givers of its own rack in turn
 * (so they shed evenly, and the copy stays in the rack), else from a giver in another rack its
 * racks allow, else through a chain. A round ends early when the surplus runs out, since that
 * changes who gives and who takes.
 */
function balanceReplicas(w: Work, searchBudget: number): void {
  const { c, t } = w;
  const nb = c.brokerIds.length;
  const nr = c.rackNames.length;
  const bands = new Bands(w.count, t.replicaLow, t.replicaHigh);
  // Brokers being removed never take, and a chain never passes a replica through one.
  const stuck = Uint8Array.from(c.removing);
  const relay = (b: number): boolean => c.removing[b] === 0;
  let searched = 0;
  const moveCounted = (p: number, from: number, to: number): void => {
    bands.account(from, -1);
    bands.account(to, -1);
    w.move(p, from, to);
    bands.account(from, 1);
    bands.account(to, 1);
  };
  const tryGiver = (s: number, d: number): boolean => {
    if (bands.giveScore(s) <= 0) return false;
    const p = w.findMovable(s, d);
    if (p < 0) return false;
    moveCounted(p, s, d);
    return true;
  };
  const turn = new Int32Array(nr);
  const fromOwnRack = (givers: readonly number[], r: number, d: number): boolean => {
    for (let i = 0; i < givers.length; i++) {
      const at = (turn[r]! + i) % givers.length;
      if (tryGiver(givers[at]!, d)) {
        turn[r] = (at + 1) % givers.length;
        return true;
      }
    }
    return false;
  };
  const throughChain = (d: number): boolean => {
    if (searched >= searchBudget) return false;
    const start = w.checks;
    const chain = findChain(nb, d, (b) => bands.giveScore(b) > 0, relay, (y, visit) => {
      for (let x = 0; x < nb && searched + w.checks - start < searchBudget; x++) {
        if (x === y) continue;
        const p = w.findMovable(x, y);
        if (p >= 0 && visit(x, p)) return;
      }
    });
    searched += w.checks - start;
    if (chain === null) return false;
    let to = d;
    for (let i = chain.length - 1; i >= 0; i--) {
      moveCounted(chain[i]!.p, chain[i]!.from, to);
      to = chain[i]!.from;
    }
    return true;
  };
  while (!bands.done) {
    const shedding = bands.above > 0;
    const takers = takersByScore(bands, nb, stuck);
    if (takers.length === 0) return;
    const all: number[] = [];
    for (let b = 0; b < nb; b++) if (bands.giveScore(b) > 0) all.push(b);
    all.sort((a, b) => bands.giveScore(b) - bands.giveScore(a) || a - b);
    const byRack: number[][] = Array.from({ length: nr }, () => []);
    for (const b of all) byRack[c.rackOf[b]!]!.push(b);
    turn.fill(0);
    const blocked: number[] = [];
    let moved = false;
    for (const d of takers) {
      if ((bands.above > 0) !== shedding) break;
      if (bands.takeScore(d) <= 0) continue;
      const r = c.rackOf[d]!;
      if (fromOwnRack(byRack[r]!, r, d) || all.some((s) => c.rackOf[s] !== r && tryGiver(s, d))) moved = true;
      else blocked.push(d);
    }
    // Chains cost more than one move each, so only when no direct move fits any taker; a taker
    // with neither sits out until something moves.
    if (!moved) moved = firstChain(blocked, throughChain, stuck);
    if (moved) stuck.set(c.removing);
  }
}

/**
 * Takes relays out of the plan. Greedy rounds can give a broker B a replica (p, from elsewhere)
 * while B passes one of its own (q) to C, where p could have gone to C directly: then p goes to
 * C, q stays on B, every count is what it was and one copy fewer moves (two brokers short of
 * the same flexible replicas, served in turn, end so). Runs until no relay is left or the budget
 * of checks is spent; before leaders are balanced, since a shortcut can move a leadership.
 */
function shortcutRelays(w: Work, budget: number): void {
  const { c } = w;
  const nb = c.brokerIds.length;
  const np = c.offsets.length - 1;
  const inInput = (p: number, b: number): boolean => holds(c.replicas, c.offsets[p]!, c.offsets[p + 1]!, b);
  const inWork = (p: number, b: number): boolean => holds(w.rep, c.offsets[p]!, c.offsets[p + 1]!, b);
  let checks = 0;
  for (let changed = true; changed && checks < budget;) {
    changed = false;
    // gained[b]: partitions b holds now and did not; lost[b]: partitions b held and does not.
    const gained = Array.from({ length: nb }, (): number[] => []);
    const lost = Array.from({ length: nb }, (): number[] => []);
    for (let p = 0; p < np; p++) {
      if (w.moved[p] === 0) continue;
      for (let s = c.offsets[p]!; s < c.offsets[p + 1]!; s++) {
        if (!inInput(p, w.rep[s]!)) gained[w.rep[s]!]!.push(p);
        if (!inWork(p, c.replicas[s]!)) lost[c.replicas[s]!]!.push(p);
      }
    }
    for (let b = 0; b < nb && checks < budget; b++) {
      for (const q of lost[b]!) {
        if (inWork(q, b)) continue;
        for (let s = c.offsets[q]!; s < c.offsets[q + 1]!; s++) {
          const to = w.rep[s]!;
          if (inInput(q, to) || !w.canMove(q, to, b)) continue;
          const p = gained[b]!.find((x) => {
            checks++;
            return inWork(x, b) && !inInput(x, b) && w.canMove(x, b, to);
          });
          if (p === undefined) continue;
          w.move(p, b, to);
          w.move(q, to, b);
          let restored = true;
          for (let r = c.offsets[q]!; r < c.offsets[q + 1]!; r++) restored &&= inInput(q, w.rep[r]!);
          if (restored) w.moved[q] = 0;
          changed = true;
          break;
        }
      }
    }
  }
}

/**
 * In rounds like the replicas: each taker gets one leadership per round, of a partition it
 * follows whose leader gives, partitions that move anyway first; else through a chain of
 * transfers.
 */
function balanceLeaders(w: Work): void {
  const { c, t } = w;
  const nb = c.brokerIds.length;
  const bands = new Bands(w.leaders, t.leaderLow, t.leaderHigh);
  const stuck = Uint8Array.from(c.removing);
  const follows = new FollowIndex({ offsets: c.offsets, rep: w.rep, held: w.held, moved: w.moved });
  // Where the last search of each broker's list succeeded: the next starts there, not at the top again.
  const resume = new Int32Array(nb);
  /** Partitions d holds but does not lead, as (leader, partition), moving ones first, until visit says stop. */
  const followed = (d: number, visit: (leader: number, p: number) => boolean): void => {
    const at = follows.firstFollowed(d, resume[d]!, visit);
    if (at >= 0) resume[d] = at;
  };
  const transfer = (p: number, to: number): void => {
    const from = w.rep[c.offsets[p]!]!;
    bands.account(from, -1);
    bands.account(to, -1);
    follows.transfer(p, to);
    w.lead(p, to);
    bands.account(from, 1);
    bands.account(to, 1);
  };
  const isGiver = (b: number): boolean => bands.giveScore(b) > 0;
  const throughChain = (d: number): boolean => {
    const chain = findChain(nb, d, isGiver, (b) => c.removing[b] === 0, followed);
    if (chain === null) return false;
    let to = d;
    for (let i = chain.length - 1; i >= 0; i--) {
      transfer(chain[i]!.p, to);
      to = chain[i]!.from;
    }
    return true;
  };
  while (!bands.done) {
    const shedding = bands.above > 0;
    const takers = takersByScore(bands, nb, stuck);
    if (takers.length === 0) return;
    const blocked: number[] = [];
    let moved = false;
    for (const d of takers) {
      if ((bands.above > 0) !== shedding) break;
      if (bands.takeScore(d) <= 0) continue;
      let found = -1;
      followed(d, (leader, p) => {
        if (isGiver(leader)) found = p;
        return found >= 0;
      });
      if (found >= 0) {
        transfer(found, d);
        moved = true;
      } else {
        blocked.push(d);
      }
    }
    if (!moved) moved = firstChain(blocked, throughChain, stuck);
    if (moved) stuck.set(c.removing);
  }
}

export function planReassignment(input: PlanInput, options: PlannerOptions = {}): ReassignmentPlan {
  const c = indexCluster(input);
  const targets = computeTargets(c, Float64Array.from(input.brokers, (b) => b.capacity));
  const w = new Work(c, targets, input);
  evacuate(w);
  balanceReplicas(w, options.searchBudget ?? DEFAULT_SEARCH_BUDGET);
  shortcutRelays(w, options.searchBudget ?? DEFAULT_SEARCH_BUDGET);
  if (options.balanceLeaders ?? true) balanceLeaders(w);
  return buildPlan(input, c, targets, w.rep);
}
