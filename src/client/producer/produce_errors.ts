// How the producer treats each per-partition Produce error code and each whole-request failure,
// following Java's producer: retriable codes go back to the accumulator (bounded by the delivery
// timeout), DUPLICATE_SEQUENCE_NUMBER is a success (the broker already holds that batch), the two
// idempotence codes get their own handling in the sender, everything else fails the batch.
// Pure; runs on the producer's thread.

import { ConnectionError } from '../connection.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

export const Outcome = {
  ok: 'ok',
  retry: 'retry',
  outOfOrder: 'outOfOrder',
  unknownProducer: 'unknownProducer',
  fail: 'fail',
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];


const RETRIABLE: ReadonlySet<number> = new Set([
  ErrorCode.CORRUPT_MESSAGE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NETWORK_EXCEPTION, ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
]);

export function partitionOutcome(code: number): Outcome {
  if (code === ErrorCode.NONE || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) return Outcome.ok;
  if (RETRIABLE.has(code)) return Outcome.retry;
  if (code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) return Outcome.outOfOrder;
  if (code === ErrorCode.UNKNOWN_PRODUCER_ID) return Outcome.unknownProducer;
  return Outcome.fail;
}

/** A whole request failed: lost connections and timeouts are retried, anything else is not. */
export function requestFailureIsRetriable(err: unknown): boolean {
  return err instanceof ConnectionError || (err instanceof KafkaError && RETRIABLE.has(err.code));
}

/** The KafkaError a failed batch's records reject with. */
export function asKafkaError(err: unknown): KafkaError {
  if (err instanceof KafkaError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof ConnectionError ? ErrorCode.NETWORK_EXCEPTION : ErrorCode.UNKNOWN_SERVER_ERROR;
  return new KafkaError(code as ErrorCode, message);
}
