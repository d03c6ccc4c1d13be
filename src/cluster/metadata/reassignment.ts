// The replica-set arithmetic of one partition's reassignment (KIP-455, after KRaft's
// PartitionReassignmentReplicas and PartitionReassignmentRevert), pure: where a target puts the
// replica list, the adding and removing replicas and the ISR; when a reassignment is complete and
// what completing it leaves; what cancelling it restores. A move is add-then-remove: the replica
// list holds the target followed by the replicas leaving, so until completion drops them nothing
// the original replicas hold is lost. Leader election over the sets these functions return is
// replication_control.ts's. Any thread.

/** A partition's replica list, ISR and reassignment sets, without its leader and epochs. */
export interface ReplicaSets {
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly addingReplicas: readonly number[];
  readonly removingReplicas: readonly number[];
}

export function inReassignment(s: ReplicaSets): boolean {
  return s.addingReplicas.length > 0 || s.removingReplicas.length > 0;
}

/** The replica list the ongoing reassignment started from: the replicas without the adding ones, in their order. */
export function originalReplicas(s: ReplicaSets): number[] {
  return s.replicas.filter((r) => !s.addingReplicas.includes(r));
}

/** The replica list the ongoing reassignment goes to: the replicas without the removing ones, in target order. */
export function targetReplicas(s: ReplicaSets): number[] {
  return s.replicas.filter((r) => !s.removingReplicas.includes(r));
}

/**
 * The sets once the ongoing reassignment is cancelled: the original replicas in their order, the
 * ISR without the adding replicas. That ISR is empty when only adding replicas were in sync; the
 * caller decides whether an unclean election may fill it.
 */
export function reverted(s: ReplicaSets): ReplicaSets {
  return { replicas: originalReplicas(s), isr: s.isr.filter((r) => !s.addingReplicas.includes(r)), addingReplicas: [], removingReplicas: [] };
}

/**
 * The sets of a partition with no ongoing reassignment (`s`) moving to `target`: the replica list
 * is the target followed by the current replicas it leaves out, those are removing, the target's
 * new ones adding, the ISR as it is. A target that only reorders the replicas is no reassignment:
 * the list becomes the target at once.
 */
export function started(s: ReplicaSets, target: readonly number[]): ReplicaSets {
  const removing = s.replicas.filter((r) => !target.includes(r));
  const adding = target.filter((r) => !s.replicas.includes(r));
  return { replicas: [...target, ...removing], isr: s.isr, addingReplicas: adding, removingReplicas: removing };
}

/**
 * The sets once the ongoing reassignment completes, or null while it cannot (or none is ongoing):
 * it completes when every target replica is in the ISR, leaving the target as the replica list and
 * the ISR without the removing replicas.
 */
export function completed(s: ReplicaSets): ReplicaSets | null {
  if (!inReassignment(s)) return null;
  const target = targetReplicas(s);
  if (!target.every((r) => s.isr.includes(r))) return null;
  return { replicas: target, isr: s.isr.filter((r) => target.includes(r)), addingReplicas: [], removingReplicas: [] };
}
