// Kafka's rules for topic names, shared by the topic front end and the metadata controller. Pure;
// any thread.
import { ErrorCode, KafkaError } from '../protocol/errors.js';

const TOPIC_NAME = /^[a-zA-Z0-9._-]+$/;
export const MAX_TOPIC_NAME_LENGTH = 249;

/** Kafka's rules: 1-249 chars of [a-zA-Z0-9._-], not "." or "..". */
export function validateTopicName(name: string): void {
  if (name.length === 0 || name.length > MAX_TOPIC_NAME_LENGTH || name === '.' || name === '..' || !TOPIC_NAME.test(name)) {
    throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `invalid topic name '${name.slice(0, 300)}'`);
  }
}
