// Dense layout of one assign() call, shared by the assignors: members sorted by id become indices
// 0..C-1, subscribed topics sorted by id become indices 0..T-1, and partition p of topic t is slot
// base[t] + p of one owner array (member index, or -1 when free). Everything per partition lives
// in typed arrays so that 500k partitions cost a few passes over an Int32Array, not 500k objects.
// Runs wherever the assignor runs (the group's shard); no I/O.
// Invariants: after layOut, owner[slot] is a member subscribed to the slot's topic that listed the
// partition as owned (the first such member in id order wins), or -1.
import type { AssignorMember, GroupAssignment, TopicIndex } from './assignor.js';

export interface PartitionLayout {
  readonly members: readonly AssignorMember[];
  readonly topicIds: readonly string[];
  /** Slots of topic t are [base[t], base[t + 1]). */
  readonly base: Int32Array;
  /** Topic indices each member subscribes to (ascending); members with one subscription share the array. */
  readonly memberTopics: readonly Int32Array[];
  /** Every member subscribes to the same topics. */
  readonly homogeneous: boolean;
  readonly owner: Int32Array;
  /** Members whose result differs from what they own (set by layOut and fillPool). */
  readonly changed: Uint8Array;
}

const byMemberId = (a: AssignorMember, b: AssignorMember): number =>
  a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0;

export function layOut(input: readonly AssignorMember[], topics: TopicIndex): PartitionLayout {
  const members = [...input].sort(byMemberId);
  // Subscriptions are resolved once per distinct Set: groups share Sets between equal subscriptions.
  const distinct = new Map<ReadonlySet<string>, string[]>();
  const known = new Set<string>();
  for (const member of members) {
    if (distinct.has(member.subscribedTopicIds)) continue;
    const ids: string[] = [];
    for (const id of member.subscribedTopicIds) {
      const info = topics.byId.get(id);
      if (info !== undefined && info.partitions > 0) { ids.push(id); known.add(id); }
    }
    distinct.set(member.subscribedTopicIds, ids);
  }
  const topicIds = [...known].sort();
  const topicOf = new Map<string, number>();
  const base = new Int32Array(topicIds.length + 1);
  for (let t = 0; t < topicIds.length; t++) {
    topicOf.set(topicIds[t]!, t);
    base[t + 1] = base[t]! + topics.byId.get(topicIds[t]!)!.partitions;
  }
  const resolved = new Map<ReadonlySet<string>, Int32Array>();
  for (const [set, ids] of distinct) resolved.set(set, Int32Array.from(ids, (id) => topicOf.get(id)!).sort());
  const memberTopics = members.map((m) => resolved.get(m.subscribedTopicIds)!);
  const homogeneous = memberTopics.every((list) => sameTopics(list, memberTopics[0]!));
  const owner = new Int32Array(base[topicIds.length]!).fill(-1);
  const changed = new Uint8Array(members.length);
  for (let m = 0; m < members.length; m++) {
    if (!claimOwned(members[m]!, m, topicOf, base, owner)) changed[m] = 1;
  }
  return { members, topicIds, base, memberTopics, homogeneous, owner, changed };
}

function sameTopics(a: Int32Array, b: Int32Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Claims the member's owned partitions that are still valid and free; false if any was not. */
function claimOwned(member: AssignorMember, m: number, topicOf: ReadonlyMap<string, number>, base: Int32Array, owner: Int32Array): boolean {
  let all = true;
  for (const [topicId, partitions] of member.owned) {
    const t = topicOf.get(topicId);
    if (t === undefined || !member.subscribedTopicIds.has(topicId)) {
      all = false;
      continue;
    }
    const lo = base[t]!;
    const count = base[t + 1]! - lo;
    for (const p of partitions) {
      if (Number.isInteger(p) && p >= 0 && p < count && owner[lo + p] === -1) owner[lo + p] = m;
      else all = false;
    }
  }
  return all;
}

/**
 * Quotas for an even split of slots [lo, hi) among `eligible` (member indices, in order): each
 * gets ⌊n/k⌋ and n mod k of them one more. The extra ones go first to members already holding
 * more than ⌊n/k⌋ there (they then give nothing up), then in `eligible` order.
 * Writes quota[m]; uses held[m] as scratch.
 */
export function evenQuotas(owner: Int32Array, lo: number, hi: number, eligible: Int32Array, quota: Int32Array, held: Int32Array): void {
  const k = eligible.length;
  if (k === 0) return;
  for (let i = 0; i < k; i++) held[eligible[i]!] = 0;
  for (let s = lo; s < hi; s++) {
    const m = owner[s]!;
    if (m >= 0) held[m]!++;
  }
  const n = hi - lo;
  const min = Math.floor(n / k);
  let extra = n - min * k;
  for (let i = 0; i < k; i++) {
    const m = eligible[i]!;
    quota[m] = min;
    if (extra > 0 && held[m]! > min) { quota[m] = min + 1; extra--; }
  }
  for (let i = 0; i < k && extra > 0; i++) {
    const m = eligible[i]!;
    if (quota[m] === min) { quota[m] = min + 1; extra--; }
  }
}

/**
 * Sticky fill of slots [lo, hi): each owner keeps its lowest slots up to quota[m], the rest are
 * freed, and free slots go to `eligible` members below quota, in order, as contiguous runs.
 * The quotas of `eligible` must sum to hi - lo. Uses kept[m] as scratch.
 */
export function fillPool(layout: PartitionLayout, lo: number, hi: number, eligible: Int32Array, quota: Int32Array, kept: Int32Array): void {
  const { owner, changed } = layout;
  for (let i = 0; i < eligible.length; i++) kept[eligible[i]!] = 0;
  for (let s = lo; s < hi; s++) {
    const m = owner[s]!;
    if (m < 0) continue;
    if (kept[m]! < quota[m]!) {
      kept[m]!++;
    } else {
      owner[s] = -1;
      changed[m] = 1;
    }
  }
  let j = 0;
  for (let s = lo; s < hi; s++) {
    if (owner[s] !== -1) continue;
    while (kept[eligible[j]!]! >= quota[eligible[j]!]!) j++;
    const m = eligible[j]!;
    owner[s] = m;
    kept[m]!++;
    changed[m] = 1;
  }
}

/**
 * The owner array as the assignors' result: one entry per member, partitions ascending; an
 * unchanged member gets its `owned` map back and costs nothing here.
 */
export function collect(layout: PartitionLayout): GroupAssignment {
  const { members, topicIds, base, owner, changed } = layout;
  const result: GroupAssignment = new Map();
  const maps = members.map((member, m) => {
    if (changed[m] === 0) {
      result.set(member.memberId, member.owned);
      return null;
    }
    const map = new Map<string, number[]>();
    result.set(member.memberId, map);
    return map;
  });
  // Two passes per topic: each array is allocated once at its final length, packed (filled), so
  // neither regrowth nor holes make garbage — at 500k partitions the collector is the main cost.
  const current: number[][] = new Array<number[]>(members.length);
  const count = new Int32Array(members.length);
  const filled = new Int32Array(members.length);
  for (let t = 0; t < topicIds.length; t++) {
    const lo = base[t]!;
    const hi = base[t + 1]!;
    for (let s = lo; s < hi; s++) {
      const m = owner[s]!;
      if (m >= 0 && changed[m] !== 0) count[m]!++;
    }
    for (let s = lo; s < hi; s++) {
      const m = owner[s]!;
      if (m < 0 || changed[m] === 0) continue;
      if (count[m]! > 0) {
        current[m] = new Array<number>(count[m]!).fill(0);
        maps[m]!.set(topicIds[t]!, current[m]!);
        count[m] = 0;
        filled[m] = 0;
      }
      current[m]![filled[m]!++] = s - lo;
    }
  }
  return result;
}

/** Members subscribed to each topic, ascending member index. */
export function subscribersByTopic(layout: PartitionLayout): Int32Array[] {
  const counts = new Int32Array(layout.topicIds.length);
  for (const list of layout.memberTopics) for (let i = 0; i < list.length; i++) counts[list[i]!]!++;
  const subscribers = Array.from(counts, (n) => new Int32Array(n));
  counts.fill(0);
  layout.memberTopics.forEach((list, m) => {
    for (let i = 0; i < list.length; i++) {
      const t = list[i]!;
      subscribers[t]![counts[t]!++] = m;
    }
  });
  return subscribers;
}
