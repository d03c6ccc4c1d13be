// DescribeConfigs for topics (every supported key with its value and source, since admin tools
// read-modify-write the whole set) and for brokers: the cluster-wide default ('', its dynamic
// overrides only, as Kafka answers it) or this broker (its static configuration and the dynamic
// configs it applies live, each resolved per broker, cluster default, Kafka default). Another
// broker's id is INVALID_REQUEST as in Kafka: clients send broker resources to that broker.
// Main thread.
import { ConfigSource, DYNAMIC_BROKER_CONFIGS, resolveBrokerConfig, staticBrokerConfigs } from '../../coordinator/broker_configs.js';
import { describeTopicConfigs, type DescribedConfig } from '../../coordinator/topic_configs.js';
import type { ClusterView } from '../../cluster/cluster_view.js';
import type { BrokerConfig } from '../../config.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster, permitsTopic } from '../acl_authority.js';
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
// Kafka's ConfigType ids (DescribeConfigs v3+).
const CONFIG_TYPE = { boolean: 1, string: 2, int: 3, long: 5, list: 7 } as const;

/** This broker's configs: static ones, then the dynamic ones with where each value comes from. */
function localBrokerConfigs(cluster: ClusterView, c: BrokerConfig): DescribedConfig[] {
  const own = cluster.brokerConfigs(String(cluster.localId));
  const shared = cluster.brokerConfigs('');
  const fixed = staticBrokerConfigs(c).map((s): DescribedConfig => ({ ...s, readOnly: true, isDefault: false, source: ConfigSource.STATIC_BROKER_CONFIG }));
  const dynamic = Object.entries(DYNAMIC_BROKER_CONFIGS).map(([name, def]): DescribedConfig => {
    const r = resolveBrokerConfig(name, own, shared);
    return { name, value: r.value, readOnly: false, isDefault: r.source === ConfigSource.DEFAULT_CONFIG, source: r.source, kind: def.kind };
  });
  return [...fixed, ...dynamic];
}

/** The cluster-wide default resource: only the dynamic defaults set on it. */
function clusterDefaultConfigs(cluster: ClusterView): DescribedConfig[] {
  return Object.entries(cluster.brokerConfigs('')).map(([name, value]): DescribedConfig => ({
    name, value, readOnly: false, isDefault: false, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, kind: DYNAMIC_BROKER_CONFIGS[name]?.kind ?? 'string',
  }));
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
      if (r.resourceType === RESOURCE_TOPIC && !permitsTopic(ctx.authorizer, AclOperation.DESCRIBE_CONFIGS, r.resourceName)) {
        return { ...base, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: `not authorized on topic '${r.resourceName}'`, configs: [] };
      }
      if (r.resourceType === RESOURCE_BROKER && !permitsCluster(ctx.authorizer, AclOperation.DESCRIBE_CONFIGS)) {
        return { ...base, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'not authorized on the cluster', configs: [] };
      }
      if (r.resourceType === RESOURCE_TOPIC) {
        const t = cluster.topic(r.resourceName);
        if (!t) return { ...base, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `unknown topic '${r.resourceName}'`, configs: [] };
        configs = describeTopicConfigs(t.configs, config);
      } else if (r.resourceType === RESOURCE_BROKER && r.resourceName === '') {
        configs = clusterDefaultConfigs(cluster);
      } else if (r.resourceType === RESOURCE_BROKER && r.resourceName === String(cluster.localId)) {
        configs = localBrokerConfigs(cluster, config);
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
