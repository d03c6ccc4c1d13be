// The one place a CLI failure becomes the line the user reads and the exit code (main thread of
// the CLI process): each message names the cause and the fix where we know one — no broker at an
// address, a topic or group that does not exist — and keeps the Kafka error name, which scripts
// match on. Pure: the error in, the message and exit code out.
import { ConnectionError } from '../client/connection.js';
import { ConfigError } from '../config.js';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import { UsageError } from './args.js';

export interface Failure {
  readonly message: string;
  /** 1 operational failure, 2 bad usage or configuration. */
  readonly exitCode: 1 | 2;
}

/** The name a message gives a topic (topic names are [A-Za-z0-9._-]+). */
function named(kind: 'topic', message: string): string | null {
  return new RegExp(`\\b${kind} '?([A-Za-z0-9._-]+)'?`).exec(message)?.[1] ?? null;
}

/** What to do about a Kafka error code, where there is something to say. */
function kafkaHint(err: KafkaError): string | null {
  const topic = named('topic', err.message);
  switch (err.code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
      return topic === null
        ? 'a topic does not exist: `sluice topic list` shows those that do'
        : `topic "${topic}" does not exist: create it with \`sluice topic create ${topic}\``;
    case ErrorCode.TOPIC_ALREADY_EXISTS:
      return topic === null ? null : `topic "${topic}" already exists: \`sluice topic describe ${topic}\` shows it`;
    case ErrorCode.GROUP_ID_NOT_FOUND:
      return '`sluice group list` shows the groups';
    case ErrorCode.UNKNOWN_MEMBER_ID:
      return 'the group has members: stop its consumers first';
    case ErrorCode.INVALID_CONFIG:
      return topic === null ? null : `\`sluice topic describe ${topic} --configs\` lists the configs a topic takes`;
    case ErrorCode.REQUEST_TIMED_OUT:
      return 'the broker did not answer in time: raise --timeout-ms, or check `sluice cluster health`';
    default:
      return null;
  }
}

/** A failed connection: the address and what usually causes it. */
function connectionMessage(err: ConnectionError): string {
  const refused = /cannot connect to (\S+): connect ECONNREFUSED/.exec(err.message);
  if (refused !== null) return `no broker at ${refused[1]}: is \`sluice start\` running? (set --brokers HOST:PORT)`;
  const unresolved = /cannot connect to (\S+): getaddrinfo (ENOTFOUND|EAI_AGAIN)/.exec(err.message);
  if (unresolved !== null) return `cannot resolve ${unresolved[1]}: check the host name in --brokers HOST:PORT`;
  return `${err.message} (check --brokers HOST:PORT and that the broker runs)`;
}

/** The message (without the "sluice: " prefix) and exit code for a failure; null when it is a bug. */
export function describeFailure(err: unknown): Failure | null {
  if (err instanceof UsageError) return { message: `${err.message}\nRun 'sluice --help' for usage.`, exitCode: 2 };
  if (err instanceof ConfigError) return { message: err.message, exitCode: 2 };
  if (err instanceof ConnectionError) return { message: connectionMessage(err), exitCode: 1 };
  if (err instanceof KafkaError) {
    const name = errorName(err.code);
    const base = err.message.startsWith(name) ? err.message : `${name}: ${err.message}`;
    const hint = kafkaHint(err);
    return { message: hint === null ? base : `${base}; ${hint}`, exitCode: 1 };
  }
  return null;
}
