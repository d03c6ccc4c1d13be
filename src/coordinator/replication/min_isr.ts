// The acks=all rules of a partition leader (Kafka's min.insync.replicas semantics, KIP-966's strict
// variant), as pure functions: whether a produce may append, and how a waiting acks=all produce
// ends. Any thread; the partition leader state and the produce path both ask them.
//
// - Admission: an acks=all produce is refused before anything is written, with
//   NOT_ENOUGH_REPLICAS, while the committed ISR is smaller than the effective min ISR.
// - Completion: a waiting acks=all produce succeeds once the high watermark covers its records
//   while the maximal ISR (committed ISR plus members a pending AlterPartition adds) holds at least
//   min ISR members. When the maximal ISR is below min ISR it fails with
//   NOT_ENOUGH_REPLICAS_AFTER_APPEND: its records are in the leader's log but under-replicated.
//   Kafka, whose high watermark also freezes below min ISR, lets such a produce wait for its
//   timeout; Sluice answers at once, so the client's retry starts without a timeout's delay.
import { ErrorCode } from '../../protocol/errors.js';

/** acks=-1: the produce waits for the whole ISR. */
export const ACKS_ALL = -1;

/** min.insync.replicas as it applies: never more than the replicas there are, never below 1. */
export function effectiveMinIsr(minInsyncReplicas: number, replicationFactor: number): number {
  return Math.max(1, Math.min(minInsyncReplicas, replicationFactor));
}

/** NONE when a produce with `acks` may append, NOT_ENOUGH_REPLICAS when acks=all meets a too-small ISR. */
export function admitProduce(acks: number, committedIsrSize: number, minIsr: number): ErrorCode {
  return acks === ACKS_ALL && committedIsrSize < minIsr ? ErrorCode.NOT_ENOUGH_REPLICAS : ErrorCode.NONE;
}

/** How an appended acks=all produce whose records end before `endOffset` stands: still waiting, or its answer. */
export function acksAllOutcome(endOffset: number, highWatermark: number, maximalIsrSize: number, minIsr: number): 'waiting' | ErrorCode {
  if (maximalIsrSize < minIsr) return ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
  return highWatermark >= endOffset ? ErrorCode.NONE : 'waiting';
}
