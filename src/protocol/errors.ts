// Kafka error codes that cross the wire, and the typed error that carries one.
// Operating errors travel as KafkaError (or a bare code in a response field); plain exceptions
// are bugs and never leave the thread that threw them.

export const ErrorCode = {
  UNKNOWN_SERVER_ERROR: -1,
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  INVALID_FETCH_SIZE: 4,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  MESSAGE_TOO_LARGE: 10,
  OFFSET_METADATA_TOO_LARGE: 12,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  INVALID_TOPIC_EXCEPTION: 17,
  RECORD_LIST_TOO_LARGE: 18,
  NETWORK_EXCEPTION: 13,
  NOT_ENOUGH_REPLICAS: 19,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 20,
  INVALID_REQUIRED_ACKS: 21,
  ILLEGAL_GENERATION: 22,
  INCONSISTENT_GROUP_PROTOCOL: 23,
  INVALID_GROUP_ID: 24,
  UNKNOWN_MEMBER_ID: 25,
  INVALID_SESSION_TIMEOUT: 26,
  REBALANCE_IN_PROGRESS: 27,
  INVALID_COMMIT_OFFSET_SIZE: 28,
  INVALID_TIMESTAMP: 32,
  UNSUPPORTED_VERSION: 35,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PARTITIONS: 37,
  INVALID_REPLICATION_FACTOR: 38,
  INVALID_REPLICA_ASSIGNMENT: 39,
  INVALID_CONFIG: 40,
  NOT_CONTROLLER: 41,
  INVALID_REQUEST: 42,
  POLICY_VIOLATION: 44,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TRANSACTION_TIMEOUT: 50,
  KAFKA_STORAGE_ERROR: 56,
  UNKNOWN_PRODUCER_ID: 59,
  NON_EMPTY_GROUP: 68,
  GROUP_ID_NOT_FOUND: 69,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
  UNSUPPORTED_COMPRESSION_TYPE: 76,
  MEMBER_ID_REQUIRED: 79,
  GROUP_MAX_SIZE_REACHED: 81,
  FENCED_INSTANCE_ID: 82,
  GROUP_SUBSCRIBED_TO_TOPIC: 86,
  INVALID_RECORD: 87,
  UNSTABLE_OFFSET_COMMIT: 88,
  UNKNOWN_TOPIC_ID: 100,
  FENCED_MEMBER_EPOCH: 110,
  UNRELEASED_INSTANCE_ID: 111,
  UNSUPPORTED_ASSIGNOR: 112,
  STALE_MEMBER_EPOCH: 113,
  INVALID_REGULAR_EXPRESSION: 128,
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const names = new Map<number, string>(Object.entries(ErrorCode).map(([k, v]) => [v, k]));

export function errorName(code: number): string {
  return names.get(code) ?? `ERROR_${code}`;
}

/** An expected failure that maps to one Kafka error code on the wire. */
export class KafkaError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message?: string) {
    super(message ?? errorName(code));
    this.name = 'KafkaError';
    this.code = code;
  }
}
