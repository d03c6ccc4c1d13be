// The vocabulary shared by the reassignment planner and executor (online expansion, DESIGN §7):
// the cluster as the planner sees it (brokers, partitions with their replicas, sizes and byte
// rates) and what a plan asks to change (replica moves, leadership changes). Plain data, so a
// plan can be printed, stored and compared byte for byte. Pure; any thread.

/** One broker of the cluster the plan targets (those staying, those added, those leaving). */
export interface BrokerSpec {
  readonly id: number;
  /** broker.rack: replicas of one partition go to distinct racks where there are enough; null: no rack. */
  readonly rack: string | null;
  /** Relative capacity (1 = an ordinary broker): the broker's share of replicas and leaders is weighted by it. */
  readonly capacity: number;
}

/** One partition as it is now. */
export interface PartitionSpec {
  readonly topic: string;
  readonly partition: number;
  /** In preference order: replicas[0] is the preferred leader. */
  readonly replicas: readonly number[];
  /** The current leader, or -1 when it has none. */
  readonly leader: number;
  /** Bytes of log on the leader: what moving one replica copies. */
  readonly sizeBytes: number;
  /** Produce rate into the partition: what makes it hot. */
  readonly bytesInPerSec: number;
}

export interface PlanInput {
  /** Every broker of the target cluster: those staying, those being added, and those being removed. */
  readonly brokers: readonly BrokerSpec[];
  /** Brokers to drain to zero replicas (a decommission); they are in `brokers` too. */
  readonly removing: readonly number[];
  readonly partitions: readonly PartitionSpec[];
}

/** A partition whose replica set changes: add the replicas in `to` not in `from`, then drop the others. */
export interface PartitionMove {
  readonly topic: string;
  readonly partition: number;
  readonly from: readonly number[];
  /** The target replica list, preferred leader first. */
  readonly to: readonly number[];
  readonly sizeBytes: number;
  readonly bytesInPerSec: number;
}

/** A partition whose replica set stays but whose preferred leader (replicas[0]) changes: no data moves. */
export interface LeadershipChange {
  readonly topic: string;
  readonly partition: number;
  readonly from: readonly number[];
  /** The same replicas, reordered so that to[0] is the new preferred leader. */
  readonly to: readonly number[];
}

/** Replicas added by a move (each one copies the partition's log once). */
export function addedReplicas(m: { readonly from: readonly number[]; readonly to: readonly number[] }): number[] {
  return m.to.filter((id) => !m.from.includes(id));
}

/** Replicas a move drops once the added ones caught up. */
export function droppedReplicas(m: { readonly from: readonly number[]; readonly to: readonly number[] }): number[] {
  return m.from.filter((id) => !m.to.includes(id));
}
