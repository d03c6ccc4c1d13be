// The classic-protocol group leader's assignor, 'cooperative-sticky': a sticky, balanced target
// (the broker's own KIP-848 'uniform' assignor, fed topic names as ids) made cooperative — a
// partition that another current member owns is left unassigned in this generation; that owner
// revokes it on seeing the new assignment and rejoins, and the follow-up rebalance hands it out.
// Pure and deterministic; runs on the consumer's thread when it leads a classic group.
// Invariants: each partition of a subscribed topic goes to at most one member, one subscribed
// to it; a partition owned by a current member is given to no one else in the same round;
// conflicting ownership claims resolve to the highest generation, then the lowest member id.
import type { TopicIndex, TopicInfo } from '../../assignors/assignor.js';
import type { AssignorMember } from '../../assignors/assignor.js';
import { UniformAssignor } from '../../assignors/uniform.js';
import { tpKey } from './topic_partitions.js';
import type { TopicPartition } from './types.js';

export const COOPERATIVE_STICKY = 'cooperative-sticky';

export interface CooperativeMember {
  readonly memberId: string;
  readonly topics: readonly string[];
  /** What the member says it owns (its subscription's ownedPartitions). */
  readonly owned: readonly TopicPartition[];
  /** The generation in which it owned them; -1 when unknown. */
  readonly generation: number;
}

const uniform = new UniformAssignor();

/** Partition key → its one rightful current owner. */
function resolveOwners(members: readonly CooperativeMember[], counts: ReadonlyMap<string, number>): Map<string, string> {
  const owner = new Map<string, { memberId: string; generation: number }>();
  for (const m of members) {
    for (const tp of m.owned) {
      const n = counts.get(tp.topic);
      if (n === undefined || tp.partition < 0 || tp.partition >= n) continue;
      const key = tpKey(tp.topic, tp.partition);
      const prev = owner.get(key);
      if (prev === undefined || m.generation > prev.generation || (m.generation === prev.generation && m.memberId < prev.memberId)) {
        owner.set(key, { memberId: m.memberId, generation: m.generation });
      }
    }
  }
  return new Map([...owner].map(([key, o]) => [key, o.memberId]));
}

function assignorMembers(members: readonly CooperativeMember[], owners: ReadonlyMap<string, string>): AssignorMember[] {
  // Equal subscriptions share one Set: the uniform assignor then takes its homogeneous path.
  const sets = new Map<string, ReadonlySet<string>>();
  return members.map((m) => {
    const sorted = [...new Set(m.topics)].sort();
    const id = sorted.join('\0');
    let subscribed = sets.get(id);
    if (subscribed === undefined) {
      subscribed = new Set(sorted);
      sets.set(id, subscribed);
    }
    const owned = new Map<string, number[]>();
    for (const tp of m.owned) {
      if (owners.get(tpKey(tp.topic, tp.partition)) !== m.memberId || !subscribed.has(tp.topic)) continue;
      const list = owned.get(tp.topic);
      if (list === undefined) owned.set(tp.topic, [tp.partition]);
      else if (!list.includes(tp.partition)) list.push(tp.partition);
    }
    for (const list of owned.values()) list.sort((a, b) => a - b);
    return { memberId: m.memberId, rackId: null, subscribedTopicIds: subscribed, owned };
  });
}

/**
 * The assignment of this generation, per member id (every member has an entry). `counts` gives
 * the partition count of each topic that exists; unknown topics are ignored.
 */
export function assignCooperative(members: readonly CooperativeMember[], counts: ReadonlyMap<string, number>): Map<string, TopicPartition[]> {
  const owners = resolveOwners(members, counts);
  const infos = [...counts].map(([name, partitions]): TopicInfo => ({ name, id: name, partitions }));
  const topics: TopicIndex = { byName: new Map(infos.map((t) => [t.name, t])), byId: new Map(infos.map((t) => [t.id, t])) };
  const target = uniform.assign(assignorMembers(members, owners), topics);
  const out = new Map<string, TopicPartition[]>();
  for (const m of members) {
    const mine: TopicPartition[] = [];
    for (const [topic, partitions] of target.get(m.memberId) ?? []) {
      for (const partition of partitions) {
        const owner = owners.get(tpKey(topic, partition));
        if (owner === undefined || owner === m.memberId) mine.push({ topic, partition });
      }
    }
    mine.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
    out.set(m.memberId, mine);
  }
  return out;
}
