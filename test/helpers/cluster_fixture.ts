// Plain-object cluster views for handler and coordinator tests: a few brokers, topics whose
// partitions all share one leader, epoch and replica list (overridable per partition).
// Test-only; main thread.
import type { BrokerEndpoint, ClusterView, PartitionRecord, TopicImage } from '../../src/cluster/cluster_view.js';

export interface FixtureTopic {
  readonly name: string;
  readonly partitions: number;
  readonly id?: string;
  readonly leader?: number;
  readonly leaderEpoch?: number;
  readonly replicas?: readonly number[];
  /** The ISR of every partition; the replicas by default. */
  readonly isr?: readonly number[];
  readonly configs?: Readonly<Record<string, string>>;
  /** Per-partition overrides of leader and epoch. */
  readonly byPartition?: Readonly<Record<number, { leader?: number; leaderEpoch?: number }>>;
}

export interface FixtureCluster {
  readonly localId?: number;
  readonly brokers?: readonly BrokerEndpoint[];
  readonly controllerId?: number;
  readonly topics?: readonly FixtureTopic[];
  /** Registered brokers beyond the live ones: fenced. */
  readonly fenced?: readonly BrokerEndpoint[];
  /** Ids of brokers still warming up. */
  readonly warming?: readonly number[];
  /** Dynamic broker config overrides by resource name (a broker id, or '' for the cluster default). */
  readonly brokerConfigs?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export function endpoint(id: number): BrokerEndpoint {
  return { id, host: `broker-${id}.test`, port: 9000 + id, rack: null };
}

/** A view of the given topics; by default this node (1) is the only broker and leads everything. */
export function clusterView(f: FixtureCluster = {}): ClusterView {
  const localId = f.localId ?? 1;
  const brokers = f.brokers ?? [endpoint(localId)];
  const topics = (f.topics ?? []).map((t, i): { image: TopicImage; spec: FixtureTopic } => ({
    image: { name: t.name, id: t.id ?? (i + 1).toString(16).padStart(32, '0'), partitions: t.partitions, configs: t.configs ?? {} },
    spec: t,
  }));
  const partition = (name: string, p: number): PartitionRecord | undefined => {
    const t = topics.find((x) => x.image.name === name);
    if (t === undefined || !Number.isInteger(p) || p < 0 || p >= t.image.partitions) return undefined;
    const over = t.spec.byPartition?.[p] ?? {};
    const leader = over.leader ?? t.spec.leader ?? localId;
    const replicas = t.spec.replicas ?? [leader];
    return {
      topicId: t.image.id, partition: p, replicas, isr: t.spec.isr ?? replicas, removingReplicas: [], addingReplicas: [],
      leader, leaderEpoch: over.leaderEpoch ?? t.spec.leaderEpoch ?? 0, partitionEpoch: 0,
    };
  };
  return {
    clusterId: 'fixture-cluster',
    localId,
    revision: 1,
    brokers: () => brokers,
    replicaBrokers: () => brokers.map((b) => ({ id: b.id, epoch: 1, isrEligible: true, endpoint: { host: b.host, port: b.port } })),
    brokerStates: () => [...brokers.map((b) => ({ b, fenced: false })), ...(f.fenced ?? []).map((b) => ({ b, fenced: true }))]
      .sort((x, y) => x.b.id - y.b.id)
      .map(({ b, fenced }) => ({ ...b, fenced, warming: f.warming?.includes(b.id) ?? false, adminAddress: null })),
    controllerId: () => f.controllerId ?? localId,
    brokerConfigs: (name) => f.brokerConfigs?.[name] ?? {},
    topics: () => topics.map((t) => t.image),
    topic: (name) => topics.find((t) => t.image.name === name)?.image,
    topicById: (id) => topics.find((t) => t.image.id === id)?.image,
    partition,
  };
}
