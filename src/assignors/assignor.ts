// The contract of a KIP-848 server-side assignor: from the members' subscriptions and their
// current (target) assignment, compute the next target assignment. Runs on the shard that owns
// the group, inside a heartbeat or tick; pure and deterministic (same input, same output).
// Invariants of every result: each partition of a topic some member subscribes to is given to
// exactly one member subscribed to it; every input member has an entry (maybe empty).

/** A topic as assignors see it: the group coordinators' topic image. */
export interface TopicInfo {
  readonly name: string;
  /** 32 lowercase hex chars. */
  readonly id: string;
  readonly partitions: number;
}

export interface TopicIndex {
  readonly byName: ReadonlyMap<string, TopicInfo>;
  readonly byId: ReadonlyMap<string, TopicInfo>;
}

export interface AssignorMember {
  memberId: string;
  rackId: string | null;
  /** Members with equal subscriptions should share one Set: the assignor then compares them by reference. */
  subscribedTopicIds: ReadonlySet<string>;
  /** Current assignment, for stickiness. */
  owned: ReadonlyMap<string, readonly number[]>;
}

/**
 * Member id → topic id → partitions. A member whose assignment does not change gets its `owned`
 * map back (the same object: that is what makes a sticky recompute cheap), so results are read-only.
 */
export type GroupAssignment = Map<string, ReadonlyMap<string, readonly number[]>>;

export interface Assignor {
  readonly name: string;
  assign(members: readonly AssignorMember[], topics: TopicIndex): GroupAssignment;
}
