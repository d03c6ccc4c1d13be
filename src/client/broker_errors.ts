// Errors our client raises for broker answers: a Kafka error code with the operation it came
// from, or a response missing what was asked for. Shared by the admin and group-admin calls.
import { ErrorCode, errorName, KafkaError } from '../protocol/errors.js';

/** A KafkaError for a code read off the wire (possibly one we have no name for). */
export function brokerError(code: number, context: string, detail: string | null): KafkaError {
  const suffix = detail === null || detail === '' ? '' : `: ${detail}`;
  return new KafkaError(code as ErrorCode, `${errorName(code)} (${context})${suffix}`);
}

/** The broker answered without the entry asked for: a broker bug, reported as such. */
export function missingFrom(response: string, context: string): KafkaError {
  return brokerError(ErrorCode.UNKNOWN_SERVER_ERROR, context, `missing from the ${response} response`);
}
