// DescribeConfigs for topics (every supported key with its value and source, since admin tools
// read-modify-write the whole set) and for this broker (its static configuration).
import { describeTopicConfigs, type DescribedConfig } from '../../coordinator/topic_configs.js';
import type { ClusterView } from '../../cluster/cluster_view.js';
import { formatPerIpOverrides, type BrokerConfig } from '../../config.js';
import { handler, type Wire } from '../handler.js';
import { DescribeConfigsApi, type DescribeConfigsRequest, type DescribeConfigsResponse } from '../../protocol/apis/describe_configs.js';
import { ErrorCode } from '../../protocol/errors.js';

type ResultOut = Wire<DescribeConfigsResponse['results'][number]>;
type ConfigOut = Wire<DescribeConfigsResponse['results'][number]['configs'][number]>;

export interface DescribeConfigsDeps {
  readonly cluster: ClusterView;
  readonly config: BrokerConfig;
}

const RESOURCE_TOPIC = 2;
const RESOURCE_BROKER = 4;
const SOURCE_STATIC_BROKER = 4;
// Kafka's ConfigType ids (DescribeConfigs v3+).
const CONFIG_TYPE = { boolean: 1, string: 2, int: 3, long: 5 } as const;

function brokerConfigs(c: BrokerConfig): DescribedConfig[] {
  const entries: Array<[string, string | number | boolean, DescribedConfig['kind']]> = [
    ['broker.id', c.nodeId, 'int'],
    ['log.dirs', c.dataDir, 'string'],
    ['listeners', `PLAINTEXT://${c.kafkaHost}:${c.kafkaPort}`, 'string'],
    ['num.partitions', c.numPartitions, 'int'],
    ['default.replication.factor', c.defaultReplicationFactor, 'int'],
    ['auto.create.topics.enable', c.autoCreateTopics, 'boolean'],
    ['message.max.bytes', c.messageMaxBytes, 'int'],
    ['socket.request.max.bytes', c.maxRequestBytes, 'int'],
    ['fetch.max.bytes', c.fetchMaxBytes, 'int'],
    ['max.connections', c.maxConnections, 'int'],
    ['max.connections.per.ip', c.maxConnectionsPerIp, 'int'],
    ['max.connections.per.ip.overrides', formatPerIpOverrides(c.maxConnectionsPerIpOverrides), 'string'],
    ['max.connection.creation.rate', c.maxConnectionCreationRate, 'int'],
    ['connections.max.idle.ms', c.idleTimeoutMs, 'long'],
    ['log.segment.bytes', c.logSegmentBytes, 'int'],
    ['log.roll.ms', c.logSegmentMs, 'long'],
    ['log.retention.ms', c.logRetentionMs, 'long'],
    ['log.retention.bytes', c.logRetentionBytes, 'long'],
    ['log.retention.check.interval.ms', c.logRetentionCheckIntervalMs, 'long'],
    ['log.index.interval.bytes', c.logIndexIntervalBytes, 'int'],
    ['producer.id.expiration.ms', c.producerIdExpirationMs, 'long'],
  ];
  return entries.map(([name, value, kind]) => ({ name, value: String(value), readOnly: true, isDefault: false, source: SOURCE_STATIC_BROKER, kind }));
}

function toWire(d: DescribedConfig, version: number): ConfigOut {
  return {
    name: d.name,
    value: d.value,
    readOnly: d.readOnly,
    isDefault: d.isDefault,
    configSource: d.source,
    isSensitive: false,
    synonyms: version >= 1 ? [{ name: d.name, value: d.value, source: d.source }] : [],
    configType: CONFIG_TYPE[d.kind],
    documentation: null,
  };
}

export const describeConfigsHandler = handler({
  api: DescribeConfigsApi,
  handle(ctx, req: DescribeConfigsRequest, deps: DescribeConfigsDeps): Wire<DescribeConfigsResponse> {
    const { cluster, config } = deps;
    const results = req.resources.map((r): ResultOut => {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      let configs: DescribedConfig[];
      if (r.resourceType === RESOURCE_TOPIC) {
        const t = cluster.topic(r.resourceName);
        if (!t) return { ...base, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `unknown topic '${r.resourceName}'`, configs: [] };
        configs = describeTopicConfigs(t.configs, config);
      } else if (r.resourceType === RESOURCE_BROKER && (r.resourceName === '' || r.resourceName === String(cluster.localId))) {
        configs = brokerConfigs(config);
      } else {
        return { ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `unsupported resource ${r.resourceType}/${r.resourceName}`, configs: [] };
      }
      const keys = r.configurationKeys;
      const chosen = keys === null ? configs : configs.filter((c) => keys.includes(c.name));
      return { ...base, errorCode: 0, errorMessage: null, configs: chosen.map((c) => toWire(c, ctx.version)) };
    });
    return { throttleTimeMs: 0, results };
  },
});
