// The topic-level configs Sluice honours, their broker-derived defaults, validation, and the
// translation into the log's LogConfig. DescribeConfigs lists every entry here with its source,
// because admin tools read-modify-write the whole set. Unsupported keys are refused with
// INVALID_CONFIG rather than stored and ignored.
import type { BrokerConfig } from '../config.js';
import type { LogConfig } from '../log/partition_log.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { isThrottledReplicaList } from './replication/throttled_replicas.js';

export type Kind = 'long' | 'int' | 'string' | 'boolean' | 'list';

interface TopicConfigDef {
  readonly kind: Kind;
  readonly brokerDefault: (c: BrokerConfig) => string;
  readonly validate?: (v: string) => boolean;
  readonly readOnly?: boolean;
}

const nonNegativeOrMinusOne = (v: string): boolean => /^-?\d+$/.test(v) && Number(v) >= -1;
const positive = (v: string): boolean => /^\d+$/.test(v) && Number(v) > 0;

export const TOPIC_CONFIGS: Readonly<Record<string, TopicConfigDef>> = {
  'cleanup.policy': { kind: 'string', brokerDefault: () => 'delete', validate: (v) => v === 'delete' },
  'compression.type': { kind: 'string', brokerDefault: () => 'producer', validate: (v) => v === 'producer' },
  'retention.ms': { kind: 'long', brokerDefault: (c) => String(c.logRetentionMs), validate: nonNegativeOrMinusOne },
  'retention.bytes': { kind: 'long', brokerDefault: (c) => String(c.logRetentionBytes), validate: nonNegativeOrMinusOne },
  'segment.bytes': { kind: 'int', brokerDefault: (c) => String(c.logSegmentBytes), validate: (v) => positive(v) && Number(v) >= 14 },
  'segment.ms': { kind: 'long', brokerDefault: (c) => String(c.logSegmentMs), validate: positive },
  'max.message.bytes': { kind: 'int', brokerDefault: (c) => String(c.messageMaxBytes), validate: positive },
  'index.interval.bytes': { kind: 'int', brokerDefault: (c) => String(c.logIndexIntervalBytes), validate: positive },
  'message.timestamp.type': {
    kind: 'string',
    brokerDefault: () => 'CreateTime',
    validate: (v) => v === 'CreateTime' || v === 'LogAppendTime',
  },
  // Applies as min(value, replication factor) (coordinator/replication/min_isr.ts), so the broker
  // default of 2 asks RF 3 topics for a quorum and leaves RF 1 topics writable with acks=all.
  'min.insync.replicas': { kind: 'int', brokerDefault: (c) => String(c.minInsyncReplicas), validate: positive },
  'unclean.leader.election.enable': { kind: 'boolean', brokerDefault: () => 'false', validate: (v) => v === 'true' || v === 'false' },
  // KIP-73: the replicas whose catch-up traffic counts against the brokers' throttled rates.
  'leader.replication.throttled.replicas': { kind: 'list', brokerDefault: () => '', validate: isThrottledReplicaList },
  'follower.replication.throttled.replicas': { kind: 'list', brokerDefault: () => '', validate: isThrottledReplicaList },
};

/** Topic configs whose values are comma lists (IncrementalAlterConfigs' APPEND and SUBTRACT apply to them). */
export function isListTopicConfig(name: string): boolean {
  return TOPIC_CONFIGS[name]?.kind === 'list';
}

/** Throws INVALID_CONFIG naming the first unknown or invalid entry. */
export function validateTopicConfigs(configs: Record<string, string>, broker: BrokerConfig): void {
  for (const [key, value] of Object.entries(configs)) {
    const def = TOPIC_CONFIGS[key];
    if (!def) throw new KafkaError(ErrorCode.INVALID_CONFIG, `unknown or unsupported topic config '${key}'`);
    if (def.validate && !def.validate(value)) {
      throw new KafkaError(ErrorCode.INVALID_CONFIG, `invalid value '${value}' for topic config '${key}'`);
    }
  }
  const maxMessage = Number(effective(configs, 'max.message.bytes', broker));
  if (maxMessage > broker.ringBytes / 2) {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `max.message.bytes ${maxMessage} exceeds half the shard ring (${broker.ringBytes} bytes)`);
  }
}

export function effective(configs: Record<string, string>, key: string, broker: BrokerConfig): string {
  const def = TOPIC_CONFIGS[key];
  if (!def) throw new Error(`no topic config ${key}`);
  return configs[key] ?? def.brokerDefault(broker);
}

export function toLogConfig(configs: Record<string, string>, broker: BrokerConfig): LogConfig {
  const n = (key: string): number => Number(effective(configs, key, broker));
  return {
    segmentBytes: n('segment.bytes'),
    segmentMs: n('segment.ms'),
    retentionMs: n('retention.ms'),
    retentionBytes: n('retention.bytes'),
    maxMessageBytes: n('max.message.bytes'),
    indexIntervalBytes: n('index.interval.bytes'),
    timestampType: effective(configs, 'message.timestamp.type', broker) === 'LogAppendTime' ? 'LogAppendTime' : 'CreateTime',
    producerIdExpirationMs: broker.producerIdExpirationMs,
  };
}

export interface DescribedConfig {
  name: string;
  value: string;
  readOnly: boolean;
  isDefault: boolean;
  source: number; // Kafka ConfigSource: 1 topic override, 5 default
  kind: Kind;
}

export function describeTopicConfigs(configs: Record<string, string>, broker: BrokerConfig): DescribedConfig[] {
  return Object.entries(TOPIC_CONFIGS).map(([name, def]) => {
    const override = configs[name];
    return {
      name,
      value: override ?? def.brokerDefault(broker),
      readOnly: def.readOnly ?? false,
      isDefault: override === undefined,
      source: override === undefined ? 5 : 1,
      kind: def.kind,
    };
  });
}
