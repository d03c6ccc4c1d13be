// Broker configs as DescribeConfigs and the alter APIs see them: the static ones (from the
// command line, read-only) and the dynamic ones a broker applies live from the metadata image,
// which are KIP-73's two replication throttle rates only. Validation of dynamic broker overrides
// for the controller, and how per-broker and cluster-default overrides resolve. Pure.
import { formatPerIpOverrides, type BrokerConfig } from '../config.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { Kind } from './topic_configs.js';

/** Kafka's Long.MAX_VALUE, the throttle rates' default: unthrottled. */
export const UNTHROTTLED = '9223372036854775807';
export const LEADER_THROTTLED_RATE = 'leader.replication.throttled.rate';
export const FOLLOWER_THROTTLED_RATE = 'follower.replication.throttled.rate';

/** The broker configs that can be changed while the broker runs, with their defaults. */
export const DYNAMIC_BROKER_CONFIGS: Readonly<Record<string, { readonly kind: Kind; readonly default: string }>> = {
  [LEADER_THROTTLED_RATE]: { kind: 'long', default: UNTHROTTLED },
  [FOLLOWER_THROTTLED_RATE]: { kind: 'long', default: UNTHROTTLED },
};

const LONG_MAX = BigInt(UNTHROTTLED);

function isNonNegativeLong(v: string): boolean {
  return /^\d{1,19}$/.test(v) && BigInt(v) <= LONG_MAX;
}

export interface StaticBrokerConfig {
  readonly name: string;
  readonly value: string;
  readonly kind: Kind;
}

const listenerOf = (c: BrokerConfig): string => c.clientListeners.map((l) => `${l.name}://${l.host}:${l.port}`).join(',');

/** The broker's static configuration under Kafka's names: [name, kind, value]. */
const STATIC_BROKER_CONFIGS: ReadonlyArray<readonly [string, Kind, (c: BrokerConfig) => string | number | boolean]> = [
  ['broker.id', 'int', (c) => c.nodeId],
  ['log.dirs', 'string', (c) => c.dataDir],
  ['listeners', 'string', listenerOf],
  ['advertised.listeners', 'string', (c) => c.clientListeners.map((l, i) => {
    const advertised = c.advertisedListeners.get(l.name);
    if (advertised !== undefined) return `${l.name}://${advertised.host}:${advertised.port}`;
    return i === 0 && c.advertisedKafkaAddr !== '' ? `${l.name}://${c.advertisedKafkaAddr}` : `${l.name}://${l.host}:${l.port}`;
  }).join(',')],
  ['num.partitions', 'int', (c) => c.numPartitions],
  ['default.replication.factor', 'int', (c) => c.defaultReplicationFactor],
  ['auto.create.topics.enable', 'boolean', (c) => c.autoCreateTopics],
  ['message.max.bytes', 'int', (c) => c.messageMaxBytes],
  ['socket.request.max.bytes', 'int', (c) => c.maxRequestBytes],
  ['fetch.max.bytes', 'int', (c) => c.fetchMaxBytes],
  ['max.connections', 'int', (c) => c.maxConnections],
  ['max.connections.per.ip', 'int', (c) => c.maxConnectionsPerIp],
  ['max.connections.per.ip.overrides', 'string', (c) => formatPerIpOverrides(c.maxConnectionsPerIpOverrides)],
  ['max.connection.creation.rate', 'int', (c) => c.maxConnectionCreationRate],
  ['connections.max.idle.ms', 'long', (c) => c.idleTimeoutMs],
  ['log.segment.bytes', 'int', (c) => c.logSegmentBytes],
  ['log.roll.ms', 'long', (c) => c.logSegmentMs],
  ['log.retention.ms', 'long', (c) => c.logRetentionMs],
  ['log.retention.bytes', 'long', (c) => c.logRetentionBytes],
  ['log.retention.check.interval.ms', 'long', (c) => c.logRetentionCheckIntervalMs],
  ['log.index.interval.bytes', 'int', (c) => c.logIndexIntervalBytes],
  ['producer.id.expiration.ms', 'long', (c) => c.producerIdExpirationMs],
];

const STATIC_NAMES: ReadonlySet<string> = new Set(STATIC_BROKER_CONFIGS.map(([name]) => name));

export function staticBrokerConfigs(c: BrokerConfig): StaticBrokerConfig[] {
  return STATIC_BROKER_CONFIGS.map(([name, kind, value]) => ({ name, value: String(value(c)), kind }));
}

/**
 * Throws for a dynamic broker override the brokers could not apply: a static config is
 * INVALID_REQUEST (as Kafka refuses "Cannot update these configs dynamically"), an unknown one
 * or a bad value INVALID_CONFIG.
 */
export function validateBrokerConfigs(configs: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(configs)) {
    if (STATIC_NAMES.has(name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `broker config '${name}' cannot be updated dynamically`);
    const def = DYNAMIC_BROKER_CONFIGS[name];
    if (def === undefined) throw new KafkaError(ErrorCode.INVALID_CONFIG, `unknown or unsupported broker config '${name.slice(0, 255)}'`);
    if (!isNonNegativeLong(value)) throw new KafkaError(ErrorCode.INVALID_CONFIG, `invalid value '${value.slice(0, 100)}' for broker config '${name}' (a long >= 0)`);
  }
}

/** Where a dynamic broker config's value comes from, with Kafka's ConfigSource ids. */
export const ConfigSource = {
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
} as const;

export interface ResolvedBrokerConfig {
  readonly value: string;
  readonly source: number;
}

/** A dynamic config's value: this broker's override, else the cluster default, else Kafka's default. */
export function resolveBrokerConfig(name: string, perBroker: Readonly<Record<string, string>>, clusterDefault: Readonly<Record<string, string>>): ResolvedBrokerConfig {
  const own = perBroker[name];
  if (own !== undefined) return { value: own, source: ConfigSource.DYNAMIC_BROKER_CONFIG };
  const shared = clusterDefault[name];
  if (shared !== undefined) return { value: shared, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG };
  return { value: DYNAMIC_BROKER_CONFIGS[name]?.default ?? '', source: ConfigSource.DEFAULT_CONFIG };
}

/** A throttle rate in bytes/s; Long.MAX (and anything past 2^53) is Infinity: unthrottled. */
export function throttleRate(name: string, perBroker: Readonly<Record<string, string>>, clusterDefault: Readonly<Record<string, string>>): number {
  const v = resolveBrokerConfig(name, perBroker, clusterDefault).value;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : Infinity;
}
