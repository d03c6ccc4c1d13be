// KIP-848 server-side 'uniform' assignor (Kafka's default): spreads all subscribed partitions
// evenly over the members and moves as few as possible. Homogeneous subscriptions (the common
// case) take a linear path: every partition of every topic is one pool, member counts differ by
// at most one, and each member keeps its lowest current partitions up to its quota — a join moves
// about P/(C+1) partitions, a leave moves only the leaver's. Heterogeneous subscriptions go
// through balanceAcrossTopics. Pure and deterministic; runs on the group's shard.
import type { Assignor, AssignorMember, GroupAssignment, TopicIndex } from './assignor.js';
import { balanceAcrossTopics } from './topic_balance.js';
import { collect, evenQuotas, fillPool, layOut } from './partition_layout.js';

export class UniformAssignor implements Assignor {
  readonly name = 'uniform';

  assign(members: readonly AssignorMember[], topics: TopicIndex): GroupAssignment {
    const layout = layOut(members, topics);
    const count = layout.members.length;
    if (count > 0 && layout.homogeneous) {
      const everyone = new Int32Array(count);
      for (let m = 0; m < count; m++) everyone[m] = m;
      const quota = new Int32Array(count);
      const scratch = new Int32Array(count);
      evenQuotas(layout.owner, 0, layout.owner.length, everyone, quota, scratch);
      fillPool(layout, 0, layout.owner.length, everyone, quota, scratch);
    } else if (count > 0) {
      balanceAcrossTopics(layout);
    }
    return collect(layout);
  }
}
