// KIP-848 server-side 'range' assignor: per topic, the members subscribed to it (sorted by id)
// split its partitions into ⌊n/k⌋ each and one more for the first n mod k, as contiguous ranges
// when nothing is owned yet. Sticky like Kafka's server-side range: a member keeps the lowest of
// its current partitions up to its quota, so only the surplus moves. Pure; runs on the group's shard.
import type { Assignor, AssignorMember, GroupAssignment, TopicIndex } from './assignor.js';
import { collect, evenQuotas, fillPool, layOut, subscribersByTopic } from './partition_layout.js';

export class RangeAssignor implements Assignor {
  readonly name = 'range';

  assign(members: readonly AssignorMember[], topics: TopicIndex): GroupAssignment {
    const layout = layOut(members, topics);
    const subscribers = subscribersByTopic(layout);
    const quota = new Int32Array(layout.members.length);
    const scratch = new Int32Array(layout.members.length);
    for (let t = 0; t < layout.topicIds.length; t++) {
      const lo = layout.base[t]!;
      const hi = layout.base[t + 1]!;
      evenQuotas(layout.owner, lo, hi, subscribers[t]!, quota, scratch);
      fillPool(layout, lo, hi, subscribers[t]!, quota, scratch);
    }
    return collect(layout);
  }
}
