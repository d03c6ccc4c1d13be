// Config side of the admin client (KafkaAdmin delegates here): DescribeConfigs of topics and
// brokers, and IncrementalAlterConfigs (set or delete single keys, KIP-339). Runs wherever its
// KafkaConnection lives (the CLI, tests); each function is one request on that connection and
// nothing retries. A broker's own configs (its id as the resource name) must be asked of that
// broker, as in Kafka; the cluster-wide broker default ('') and topics can be asked of any.
// Per-resource failures are results, not errors; a refusal of the whole request throws.
import { ConfigOperation, IncrementalAlterConfigsApi } from '../protocol/apis/alter_configs.js';
import { DescribeConfigsApi } from '../protocol/apis/describe_configs.js';
import type { DescribeConfigsResponseConfig } from '../protocol/apis/describe_configs.js';
import { errorName } from '../protocol/errors.js';
import type { KafkaConnection } from './connection.js';

export type ConfigResourceType = 'topic' | 'broker';

const RESOURCE_TYPE_IDS: Readonly<Record<ConfigResourceType, number>> = { topic: 2, broker: 4 };

export interface ConfigResource {
  readonly type: ConfigResourceType;
  /** The topic name, or the broker id as a string ('' for the cluster-wide broker default). */
  readonly name: string;
}

export interface ConfigEntryDescription {
  readonly name: string;
  readonly value: string | null;
  /** Kafka's ConfigSource name, e.g. DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DEFAULT_CONFIG. */
  readonly source: string;
  readonly readOnly: boolean;
  readonly sensitive: boolean;
}

export interface ResourceConfigs extends ConfigResource {
  readonly errorCode: number;
  /** NONE when described. */
  readonly error: string;
  readonly message: string | null;
  readonly configs: readonly ConfigEntryDescription[];
}

/** One key to set, or to delete (value null), on one resource. */
export interface ConfigChange extends ConfigResource {
  readonly key: string;
  readonly value: string | null;
}

export interface ConfigChangeOutcome extends ConfigResource {
  readonly errorCode: number;
  readonly error: string;
  readonly message: string | null;
}

const CONFIG_SOURCES: ReadonlyMap<number, string> = new Map([
  [1, 'DYNAMIC_TOPIC_CONFIG'], [2, 'DYNAMIC_BROKER_CONFIG'], [3, 'DYNAMIC_DEFAULT_BROKER_CONFIG'],
  [4, 'STATIC_BROKER_CONFIG'], [5, 'DEFAULT_CONFIG'], [6, 'DYNAMIC_BROKER_LOGGER_CONFIG'],
  [7, 'CLIENT_METRICS_CONFIG'], [8, 'GROUP_CONFIG'],
]);

export function configEntry(c: DescribeConfigsResponseConfig, version: number): ConfigEntryDescription {
  // v0 has only isDefault; v1+ says where the value came from.
  const source = version === 0
    ? (c.isDefault ? 'DEFAULT_CONFIG' : 'DYNAMIC_TOPIC_CONFIG')
    : (CONFIG_SOURCES.get(c.configSource) ?? 'UNKNOWN');
  return { name: c.name, value: c.value, source, readOnly: c.readOnly, sensitive: c.isSensitive };
}

function typeName(id: number): ConfigResourceType | null {
  return id === RESOURCE_TYPE_IDS.topic ? 'topic' : id === RESOURCE_TYPE_IDS.broker ? 'broker' : null;
}

/** The configs of each resource (only `keys` when given), in the order asked. */
export async function describeConfigs(conn: KafkaConnection, resources: readonly ConfigResource[], keys: readonly string[] | null = null): Promise<ResourceConfigs[]> {
  const version = conn.versionFor(DescribeConfigsApi);
  const res = await conn.request(DescribeConfigsApi, {
    resources: resources.map((r) => ({ resourceType: RESOURCE_TYPE_IDS[r.type], resourceName: r.name, configurationKeys: keys === null ? null : [...keys] })),
    includeSynonyms: false,
    includeDocumentation: false,
  }, version);
  return resources.map((r): ResourceConfigs => {
    const result = res.results.find((x) => typeName(x.resourceType) === r.type && x.resourceName === r.name);
    if (result === undefined) return { ...r, errorCode: -1, error: 'UNKNOWN_SERVER_ERROR', message: 'missing from the DescribeConfigs response', configs: [] };
    const configs = result.configs.map((c) => configEntry(c, version)).sort((a, b) => (a.name < b.name ? -1 : 1));
    return { ...r, errorCode: result.errorCode, error: errorName(result.errorCode), message: result.errorMessage, configs };
  });
}

/** Sets (or deletes, value null) each key; one outcome per resource touched, in first-mention order. */
export async function incrementalAlterConfigs(conn: KafkaConnection, changes: readonly ConfigChange[]): Promise<ConfigChangeOutcome[]> {
  const byResource = new Map<string, { resource: ConfigResource; configs: { name: string; configOperation: number; value: string | null }[] }>();
  for (const c of changes) {
    const id = `${c.type}|${c.name}`;
    let entry = byResource.get(id);
    if (entry === undefined) byResource.set(id, (entry = { resource: { type: c.type, name: c.name }, configs: [] }));
    entry.configs.push({ name: c.key, configOperation: c.value === null ? ConfigOperation.DELETE : ConfigOperation.SET, value: c.value });
  }
  const res = await conn.request(IncrementalAlterConfigsApi, {
    resources: [...byResource.values()].map(({ resource, configs }) => ({ resourceType: RESOURCE_TYPE_IDS[resource.type], resourceName: resource.name, configs })),
    validateOnly: false,
  });
  return [...byResource.values()].map(({ resource }): ConfigChangeOutcome => {
    const r = res.responses.find((x) => typeName(x.resourceType) === resource.type && x.resourceName === resource.name);
    if (r === undefined) return { ...resource, errorCode: -1, error: 'UNKNOWN_SERVER_ERROR', message: 'missing from the IncrementalAlterConfigs response' };
    return { ...resource, errorCode: r.errorCode, error: errorName(r.errorCode), message: r.errorMessage };
  });
}
