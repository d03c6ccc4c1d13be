// Admin client: topic create/delete/list/describe over one KafkaConnection, returning plain
// objects. Runs wherever its connection lives (the CLI, tests). Broker-side failures surface as
// KafkaError carrying the broker's error code; nothing here retries.
// Limitation: requests go to the connected broker; redirecting CreateTopics/DeleteTopics to the
// controller (NOT_CONTROLLER) is for when there is more than one broker.

import { ErrorCode, KafkaError, errorName } from '../net/protocol/errors.js';
import { CreateTopicsApi } from '../net/protocol/apis/create_topics.js';
import { DeleteTopicsApi } from '../net/protocol/apis/delete_topics.js';
import { DescribeConfigsApi } from '../net/protocol/apis/describe_configs.js';
import type { DescribeConfigsResponseConfig } from '../net/protocol/apis/describe_configs.js';
import { MetadataApi } from '../net/protocol/apis/metadata.js';
import type { MetadataResponseTopic } from '../net/protocol/apis/metadata.js';
import { ZERO_UUID } from '../net/protocol/schema.js';
import { KafkaConnection } from './connection.js';
import type { ConnectionOptions } from './connection.js';

export interface CreatedTopic {
  name: string;
  /** 32 hex digits; all zeros when the broker's CreateTopics version predates topic ids. */
  topicId: string;
  /** -1 when the broker's CreateTopics version does not report them (before v5). */
  partitions: number;
  replicationFactor: number;
}

export interface TopicSummary {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: number;
  replicationFactor: number;
}

export interface PartitionInfo {
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

export interface TopicConfigEntry {
  name: string;
  value: string | null;
  /** Kafka's ConfigSource name, e.g. DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG. */
  source: string;
  readOnly: boolean;
  sensitive: boolean;
}

export interface TopicDescription extends TopicSummary {
  partitionDetails: PartitionInfo[];
  /** null when the broker does not offer DescribeConfigs. */
  configs: TopicConfigEntry[] | null;
}

export interface AdminOptions {
  /** How long the broker may take to finish a create/delete (sent in the request); default 15 s. */
  operationTimeoutMs?: number;
}

const RESOURCE_TYPE_TOPIC = 2;

const CONFIG_SOURCES: ReadonlyMap<number, string> = new Map([
  [1, 'DYNAMIC_TOPIC_CONFIG'], [2, 'DYNAMIC_BROKER_CONFIG'], [3, 'DYNAMIC_DEFAULT_BROKER_CONFIG'],
  [4, 'STATIC_BROKER_CONFIG'], [5, 'DEFAULT_CONFIG'], [6, 'DYNAMIC_BROKER_LOGGER_CONFIG'],
  [7, 'CLIENT_METRICS_CONFIG'], [8, 'GROUP_CONFIG'],
]);

/** A KafkaError for a code read off the wire (possibly one we have no name for). */
function brokerError(code: number, context: string, detail: string | null): KafkaError {
  const suffix = detail === null || detail === '' ? '' : `: ${detail}`;
  return new KafkaError(code as ErrorCode, `${errorName(code)} (${context})${suffix}`);
}

/** The broker answered without the entry asked for: a broker bug, reported as such. */
function missingFrom(response: string, context: string): KafkaError {
  return brokerError(ErrorCode.UNKNOWN_SERVER_ERROR, context, `missing from the ${response} response`);
}

function summarize(t: MetadataResponseTopic): TopicSummary {
  return {
    name: t.name ?? '',
    topicId: t.topicId,
    internal: t.isInternal,
    partitions: t.partitions.length,
    replicationFactor: t.partitions[0]?.replicaNodes.length ?? 0,
  };
}

function configEntry(c: DescribeConfigsResponseConfig, version: number): TopicConfigEntry {
  // v0 has only isDefault; v1+ says where the value came from.
  const source = version === 0
    ? (c.isDefault ? 'DEFAULT_CONFIG' : 'DYNAMIC_TOPIC_CONFIG')
    : (CONFIG_SOURCES.get(c.configSource) ?? 'UNKNOWN');
  return { name: c.name, value: c.value, source, readOnly: c.readOnly, sensitive: c.isSensitive };
}

export class KafkaAdmin {
  private readonly operationTimeoutMs: number;

  constructor(private readonly conn: KafkaConnection, options: AdminOptions = {}) {
    this.operationTimeoutMs = options.operationTimeoutMs ?? 15_000;
  }

  static async connect(options: ConnectionOptions & AdminOptions): Promise<KafkaAdmin> {
    return new KafkaAdmin(await KafkaConnection.connect(options), options);
  }

  /** Creates one topic. -1 partitions / replication factor asks for the broker's defaults (v4+). */
  async createTopics(
    name: string, partitions: number, replicationFactor: number, configs: Record<string, string> = {},
  ): Promise<CreatedTopic> {
    const res = await this.conn.request(CreateTopicsApi, {
      topics: [{
        name,
        numPartitions: partitions,
        replicationFactor,
        assignments: [],
        configs: Object.entries(configs).map(([k, value]) => ({ name: k, value })),
      }],
      timeoutMs: this.operationTimeoutMs,
      validateOnly: false,
    }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    const t = res.topics.find((x) => x.name === name);
    if (t === undefined) throw missingFrom('CreateTopics', `topic ${name}`);
    if (t.errorCode !== 0) throw brokerError(t.errorCode, `topic ${name}`, t.errorMessage);
    return { name, topicId: t.topicId, partitions: t.numPartitions, replicationFactor: t.replicationFactor };
  }

  async deleteTopics(names: readonly string[]): Promise<void> {
    const res = await this.conn.request(DeleteTopicsApi, {
      // v6+ names topics in `topics`, earlier versions in `topicNames`; the codec sends the one
      // the negotiated version has.
      topics: names.map((name) => ({ name, topicId: ZERO_UUID })),
      topicNames: [...names],
      timeoutMs: this.operationTimeoutMs,
    }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    const failed = res.responses.filter((r) => r.errorCode !== 0);
    const first = failed[0];
    if (first === undefined) return;
    const detail = failed.map((r) => `${r.name ?? r.topicId}: ${errorName(r.errorCode)}`).join(', ');
    throw brokerError(first.errorCode, 'delete topics', detail);
  }

  /** Every topic the broker knows, sorted by name. */
  async listTopics(): Promise<TopicSummary[]> {
    const version = this.conn.versionFor(MetadataApi);
    // v0 has no null array: there, an empty list means "all topics".
    const topics = await this.metadata(version === 0 ? [] : null, version);
    return topics.map(summarize).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async describeTopic(name: string): Promise<TopicDescription> {
    const [t] = await this.metadata([name], this.conn.versionFor(MetadataApi));
    if (t === undefined) throw missingFrom('Metadata', `topic ${name}`);
    if (t.errorCode !== 0) throw brokerError(t.errorCode, `topic ${name}`, null);
    return {
      ...summarize(t),
      partitionDetails: t.partitions
        .map((p) => ({
          partition: p.partitionIndex,
          leader: p.leaderId,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicaNodes,
          isr: p.isrNodes,
          offlineReplicas: p.offlineReplicas,
        }))
        .sort((a, b) => a.partition - b.partition),
      configs: this.conn.brokerVersions.has(DescribeConfigsApi.key) ? await this.topicConfigs(name) : null,
    };
  }

  close(): Promise<void> {
    return this.conn.close();
  }

  private async metadata(names: string[] | null, version: number): Promise<MetadataResponseTopic[]> {
    const res = await this.conn.request(MetadataApi, {
      topics: names === null ? null : names.map((name) => ({ topicId: ZERO_UUID, name })),
      // Describing a topic must never create it (v4+; older brokers decide for themselves).
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }, version);
    return res.topics;
  }

  private async topicConfigs(name: string): Promise<TopicConfigEntry[]> {
    const version = this.conn.versionFor(DescribeConfigsApi);
    const res = await this.conn.request(DescribeConfigsApi, {
      resources: [{ resourceType: RESOURCE_TYPE_TOPIC, resourceName: name, configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    }, version);
    const result = res.results[0];
    if (result === undefined) throw missingFrom('DescribeConfigs', `configs of ${name}`);
    if (result.errorCode !== 0) throw brokerError(result.errorCode, `configs of ${name}`, result.errorMessage);
    return result.configs.map((c) => configEntry(c, version)).sort((a, b) => (a.name < b.name ? -1 : 1));
  }
}
