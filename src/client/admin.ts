// Admin client: topic create/delete/list/describe and the cluster's brokers and partition health
// over one KafkaConnection, returning plain objects; the consumer-group operations live in
// group_admin.ts and are reached through the same object. Runs wherever its connection lives (the
// CLI, tests). Broker-side failures surface as KafkaError carrying the broker's error code;
// nothing here retries.
// Limitation: requests go to the connected broker; redirecting CreateTopics/DeleteTopics to the
// controller (NOT_CONTROLLER) is for when there is more than one broker. The one exception is
// describeLogDirs, which every broker answers for itself: it dials each broker for one request.

import { brokerError, missingFrom } from './broker_errors.js';
import { errorName, KafkaError } from '../protocol/errors.js';
import { CreateTopicsApi } from '../protocol/apis/create_topics.js';
import { DeleteTopicsApi } from '../protocol/apis/delete_topics.js';
import { DescribeClusterApi } from '../protocol/apis/describe_cluster.js';
import { ElectLeadersApi } from '../protocol/apis/elect_leaders.js';
import { AlterPartitionReassignmentsApi } from '../protocol/apis/alter_partition_reassignments.js';
import { ListPartitionReassignmentsApi } from '../protocol/apis/list_partition_reassignments.js';
import { UnregisterBrokerApi } from '../protocol/apis/unregister_broker.js';
import { randomBytes } from 'node:crypto';
import {
  AlterUserScramCredentialsApi, DescribeUserScramCredentialsApi, SCRAM_MECHANISM_CODES, scramSaltedPassword,
} from '../protocol/apis/scram_credentials.js';
import {
  AlterClientQuotasApi, DescribeClientQuotasApi,
  type AlterClientQuotasEntry, type DescribeClientQuotasEntry, type DescribeClientQuotasRequest, type QuotaEntityPart,
} from '../protocol/apis/client_quotas.js';
import { DescribeConfigsApi } from '../protocol/apis/describe_configs.js';
import {
  CreateAclsApi, DeleteAclsApi, DescribeAclsApi,
  type AclCreationWire, type AclFilterWire, type DeleteAclsMatchingAcl, type DescribeAclsResource,
} from '../protocol/apis/acls.js';
import { DescribeLogDirsApi } from '../protocol/apis/describe_log_dirs.js';
import type { DescribeLogDirsResponse } from '../protocol/apis/describe_log_dirs.js';
import { MetadataApi } from '../protocol/apis/metadata.js';
import type { MetadataResponse, MetadataResponsePartition, MetadataResponseTopic } from '../protocol/apis/metadata.js';
import { ZERO_UUID } from '../protocol/schema.js';
import { KafkaConnection } from './connection.js';
import { describeConfigs, incrementalAlterConfigs } from './config_admin.js';
import type { ConfigChange, ConfigChangeOutcome, ConfigEntryDescription, ConfigResource, ResourceConfigs } from './config_admin.js';
import type { ConnectionOptions } from './connection.js';
import {
  commitGroupOffsets, deleteGroups, describeGroups, fetchGroupOffsets, groupLag, listGroups, listOffsets, recordTimestamps,
} from './group_admin.js';
import type {
  CommittedOffset, GroupDescription, GroupSummary, ListedOffset, OffsetSpec, PartitionLag, PartitionOffset, TopicPartition,
} from './group_admin.js';

export interface CreatedTopic {
  name: string;
  /** 32 hex digits; all zeros when the broker's CreateTopics version predates topic ids. */
  topicId: string;
  /** -1 when the broker's CreateTopics version does not report them (before v5). */
  partitions: number;
  replicationFactor: number;
}

/** One partition's answer to ElectLeaders: errorName NONE when its leader moved. */
export interface ElectionOutcome {
  readonly topic: string;
  readonly partition: number;
  readonly error: string;
  readonly message: string | null;
}

/** One partition's target replicas for alterPartitionReassignments; null cancels its ongoing reassignment. */
export interface PartitionReassignment {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[] | null;
}

/** One partition's answer to AlterPartitionReassignments: error NONE when taken. */
export interface ReassignmentOutcome {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly error: string;
  readonly message: string | null;
}

/** A partition being reassigned: its replica list (target first, then the leaving replicas) and the replicas being added and removed. */
export interface OngoingReassignment {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
  readonly addingReplicas: readonly number[];
  readonly removingReplicas: readonly number[];
}

export interface TopicSummary {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: number;
  replicationFactor: number;
  /** Partitions whose ISR is smaller than their replica set. */
  underReplicated: number;
  /** Partitions without a leader (leader -1). */
  leaderless: number;
}

export interface PartitionInfo {
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
  /** The ISR is smaller than the replica set, as Kafka's UnderReplicatedPartitions counts it. */
  underReplicated: boolean;
  /** No leader (-1): the partition takes neither produces nor fetches. */
  leaderless: boolean;
}

/** A topic with its partitions, as one Metadata answer has it. */
export interface TopicPartitions extends TopicSummary {
  partitionDetails: PartitionInfo[];
}

export interface BrokerInfo {
  id: number;
  host: string;
  port: number;
  rack: string | null;
}

/** A registered broker and its standing, as DescribeCluster shows it. */
export interface BrokerStanding extends BrokerInfo {
  /** running: unfenced and warm; warming: joined a cluster with topics and not yet leading (Sluice). */
  state: 'running' | 'warming' | 'fenced';
  /** Its admin HTTP listener (/metrics, /v1/health), host:port; null when unknown (Sluice). */
  adminAddress: string | null;
}

/** The cluster as the connected broker's Metadata shows it: live brokers and every topic. */
export interface ClusterMetadata {
  /** null when the broker's Metadata version predates cluster ids (before v2). */
  clusterId: string | null;
  /** -1 when unknown (Metadata v0, or no active controller). */
  controllerId: number;
  /** Live brokers, ascending by id. */
  brokers: BrokerInfo[];
  /** Every topic, internal ones included, sorted by name. */
  topics: TopicPartitions[];
}

export type TopicConfigEntry = ConfigEntryDescription;

export interface TopicDescription extends TopicPartitions {
  /** null when the broker does not offer DescribeConfigs. */
  configs: TopicConfigEntry[] | null;
}

/** One replica in a broker's log dir: what moving it copies. */
export interface LogDirPartition {
  topic: string;
  partition: number;
  sizeBytes: number;
  /** How far the replica's log end is below the high watermark (a current replica: 0). */
  offsetLag: number;
}

export interface LogDirDescription {
  path: string;
  /** Kafka error name, or null. */
  error: string | null;
  /** null when the broker does not report them (DescribeLogDirs before v4, or unknown). */
  totalBytes: number | null;
  usableBytes: number | null;
  partitions: LogDirPartition[];
}

/** One broker's answer to describeLogDirs; `error` (a Kafka error name or why it was not reached) leaves `logDirs` empty. */
export interface BrokerLogDirs {
  broker: number;
  error: string | null;
  logDirs: LogDirDescription[];
}

export interface AdminOptions {
  /** How long the broker may take to finish a create/delete (sent in the request); default 15 s. */
  operationTimeoutMs?: number;
  /** For the connections describeLogDirs opens to each broker; defaults as KafkaConnection's. */
  clientId?: string;
  requestTimeoutMs?: number;
}

/** Brokers describeLogDirs talks to at once (one short-lived connection each). */
const MAX_BROKER_DIALS = 8;

function partitionInfo(p: MetadataResponsePartition): PartitionInfo {
  return {
    partition: p.partitionIndex,
    leader: p.leaderId,
    leaderEpoch: p.leaderEpoch,
    replicas: p.replicaNodes,
    isr: p.isrNodes,
    offlineReplicas: p.offlineReplicas,
    underReplicated: p.isrNodes.length < p.replicaNodes.length,
    leaderless: p.leaderId < 0,
  };
}

function topicPartitions(t: MetadataResponseTopic): TopicPartitions {
  const partitionDetails = t.partitions.map(partitionInfo).sort((a, b) => a.partition - b.partition);
  return {
    name: t.name ?? '',
    topicId: t.topicId,
    internal: t.isInternal,
    partitions: t.partitions.length,
    replicationFactor: t.partitions[0]?.replicaNodes.length ?? 0,
    underReplicated: partitionDetails.filter((p) => p.underReplicated).length,
    leaderless: partitionDetails.filter((p) => p.leaderless).length,
    partitionDetails,
  };
}

function summarize(t: MetadataResponseTopic): TopicSummary {
  const { partitionDetails: _, ...summary } = topicPartitions(t);
  return summary;
}

function logDirsOf(broker: number, res: DescribeLogDirsResponse): BrokerLogDirs {
  if (res.errorCode !== 0) return { broker, error: errorName(res.errorCode), logDirs: [] };
  return {
    broker,
    error: null,
    logDirs: res.results.map((d) => ({
      path: d.logDir,
      error: d.errorCode === 0 ? null : errorName(d.errorCode),
      totalBytes: d.totalBytes < 0 ? null : d.totalBytes,
      usableBytes: d.usableBytes < 0 ? null : d.usableBytes,
      partitions: d.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, sizeBytes: p.partitionSize, offsetLag: p.offsetLag }))),
    })),
  };
}

/** Runs `work` over `items`, at most `limit` at a time; results in the order of `items`. */
async function boundedMap<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export type ScramMechanismName = keyof typeof SCRAM_MECHANISM_CODES;

/** A quota entity as Kafka's tools print it: user=NAME,client-id=<default>. */
export function describeEntity(parts: readonly QuotaEntityPart[]): string {
  return parts.map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`).join(',');
}

/** A user's SCRAM credentials as DescribeUserScramCredentials lists them (never a salt or key). */
export interface ScramUserCredentials {
  readonly user: string;
  readonly credentials: readonly { readonly mechanism: string; readonly iterations: number }[];
}

export class KafkaAdmin {
  private readonly operationTimeoutMs: number;

  private readonly dialOptions: Pick<ConnectionOptions, 'clientId' | 'requestTimeoutMs'>;

  constructor(private readonly conn: KafkaConnection, options: AdminOptions = {}) {
    this.operationTimeoutMs = options.operationTimeoutMs ?? 15_000;
    this.dialOptions = {
      ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    };
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

  /**
   * Preferred (0) or unclean (1) leader election of the named partitions, or of every partition
   * (then only the partitions whose election was needed are answered). Per-partition failures are
   * results, not errors; a refusal of the whole request throws.
   */
  async electLeaders(electionType: 0 | 1, partitions: readonly { readonly topic: string; readonly partitions: readonly number[] }[] | null): Promise<ElectionOutcome[]> {
    const res = await this.conn.request(ElectLeadersApi, {
      electionType,
      topicPartitions: partitions?.map((t) => ({ topic: t.topic, partitionId: [...t.partitions] })) ?? null,
      timeoutMs: this.operationTimeoutMs,
    }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    if (res.errorCode !== 0) throw brokerError(res.errorCode, 'elect leaders', null);
    return res.replicaElectionResults.flatMap((t) => t.partitionResult.map((p) => ({
      topic: t.topic, partition: p.partitionId, error: errorName(p.errorCode), message: p.errorMessage,
    })));
  }

  /**
   * Starts, replaces or cancels (replicas null) partition reassignments (KIP-455). Per-partition
   * failures are results, not errors; a refusal of the whole request throws.
   */
  async alterPartitionReassignments(moves: readonly PartitionReassignment[]): Promise<ReassignmentOutcome[]> {
    const byTopic = new Map<string, { partitionIndex: number; replicas: number[] | null }[]>();
    for (const m of moves) {
      let list = byTopic.get(m.topic);
      if (list === undefined) byTopic.set(m.topic, (list = []));
      list.push({ partitionIndex: m.partition, replicas: m.replicas === null ? null : [...m.replicas] });
    }
    const res = await this.conn.request(AlterPartitionReassignmentsApi, {
      timeoutMs: this.operationTimeoutMs,
      topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    if (res.errorCode !== 0) throw brokerError(res.errorCode, 'alter partition reassignments', res.errorMessage);
    return res.responses.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, errorCode: p.errorCode, error: errorName(p.errorCode), message: p.errorMessage })));
  }

  /** The ongoing reassignments of the named partitions, or of every partition (null). */
  async listPartitionReassignments(partitions: readonly { readonly topic: string; readonly partitions: readonly number[] }[] | null = null): Promise<OngoingReassignment[]> {
    const res = await this.conn.request(ListPartitionReassignmentsApi, {
      timeoutMs: this.operationTimeoutMs,
      topics: partitions?.map((t) => ({ name: t.topic, partitionIndexes: [...t.partitions] })) ?? null,
    }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    if (res.errorCode !== 0) throw brokerError(res.errorCode, 'list partition reassignments', res.errorMessage);
    return res.topics.flatMap((t) => t.partitions.map((p) => ({
      topic: t.name, partition: p.partitionIndex, replicas: p.replicas, addingReplicas: p.addingReplicas, removingReplicas: p.removingReplicas,
    })));
  }

  /**
   * Forgets broker `brokerId`'s registration on the controller (UnregisterBroker, KIP-500): it
   * leaves Metadata and DescribeCluster. The controller leaves partitions that still list it as
   * they are, so drain it first (`sluice cluster remove-broker` checks). Throws KafkaError
   * BROKER_ID_NOT_REGISTERED for an id the controller does not know.
   */
  async unregisterBroker(brokerId: number): Promise<void> {
    const res = await this.conn.request(UnregisterBrokerApi, { brokerId }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    if (res.errorCode !== 0) throw brokerError(res.errorCode, `unregister broker ${brokerId}`, res.errorMessage);
  }

  /**
   * Sets `user`'s SCRAM credential for `mechanism` (AlterUserScramCredentials, KIP-554): the
   * password is salted and iterated here, only the salted password travels. Throws KafkaError.
   */
  async upsertScramCredential(user: string, mechanism: ScramMechanismName, password: string, iterations = 4096): Promise<void> {
    const salt = randomBytes(24);
    const saltedPassword = scramSaltedPassword(mechanism, password, salt, iterations);
    await this.alterScram({ deletions: [], upsertions: [{ name: user, mechanism: SCRAM_MECHANISM_CODES[mechanism], iterations, salt, saltedPassword }] }, user);
  }

  /** Deletes `user`'s SCRAM credential for `mechanism`; RESOURCE_NOT_FOUND when there is none. */
  async deleteScramCredential(user: string, mechanism: ScramMechanismName): Promise<void> {
    await this.alterScram({ deletions: [{ name: user, mechanism: SCRAM_MECHANISM_CODES[mechanism] }], upsertions: [] }, user);
  }

  private async alterScram(req: Parameters<typeof AlterUserScramCredentialsApi.encodeRequest>[1], user: string): Promise<void> {
    const res = await this.conn.request(AlterUserScramCredentialsApi, req, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    const r = res.results.find((x) => x.user === user);
    if (r === undefined) throw new KafkaError(-1, `the broker answered nothing for user ${user}`);
    if (r.errorCode !== 0) throw brokerError(r.errorCode, `SCRAM credential of ${user}`, r.errorMessage);
  }

  /** Creates ACLs (CreateAcls); throws the first refusal as a KafkaError. Creating an existing ACL is no change. */
  async createAcls(creations: readonly AclCreationWire[]): Promise<void> {
    const res = await this.conn.request(CreateAclsApi, { creations: [...creations] }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    res.results.forEach((r, i) => {
      if (r.errorCode !== 0) throw brokerError(r.errorCode, `create ACL ${JSON.stringify(creations[i])}`, r.errorMessage);
    });
  }

  /** The ACLs `filter` selects (DescribeAcls), grouped by resource pattern. */
  async describeAcls(filter: AclFilterWire): Promise<DescribeAclsResource[]> {
    const res = await this.conn.request(DescribeAclsApi, filter);
    if (res.errorCode !== 0) throw brokerError(res.errorCode, 'describe ACLs', res.errorMessage);
    return res.resources;
  }

  /** Deletes the ACLs the filters select (DeleteAcls) and returns them; throws a filter's refusal. */
  async deleteAcls(filters: readonly AclFilterWire[]): Promise<DeleteAclsMatchingAcl[]> {
    const res = await this.conn.request(DeleteAclsApi, { filters: [...filters] }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    return res.filterResults.flatMap((f) => {
      if (f.errorCode !== 0) throw brokerError(f.errorCode, 'delete ACLs', f.errorMessage);
      return f.matchingAcls;
    });
  }

  /** Users with SCRAM credentials and each credential's mechanism and iterations (null: every user), sorted by name. */
  async describeScramCredentials(users: readonly string[] | null = null): Promise<ScramUserCredentials[]> {
    const res = await this.conn.request(DescribeUserScramCredentialsApi, { users: users === null ? null : users.map((name) => ({ name })) });
    if (res.errorCode !== 0) throw brokerError(res.errorCode, 'describe SCRAM credentials', res.errorMessage);
    const names = Object.entries(SCRAM_MECHANISM_CODES);
    return res.results.map((r) => {
      if (r.errorCode !== 0) throw brokerError(r.errorCode, `SCRAM credentials of ${r.user}`, r.errorMessage);
      return {
        user: r.user,
        credentials: r.credentialInfos.map((c) => ({ mechanism: names.find(([, code]) => code === c.mechanism)?.[0] ?? `unknown(${c.mechanism})`, iterations: c.iterations })),
      };
    }).sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : 0));
  }

  /**
   * Sets and removes client quotas (AlterClientQuotas, KIP-546): each entry's ops apply whole or
   * not at all; `validateOnly` checks without changing anything. Throws KafkaError for the first
   * entry refused (the ones before it applied).
   */
  async alterClientQuotas(entries: readonly AlterClientQuotasEntry[], validateOnly = false): Promise<void> {
    const res = await this.conn.request(AlterClientQuotasApi, { entries: [...entries], validateOnly }, undefined, { timeoutMs: this.operationTimeoutMs + 5_000 });
    for (const r of res.entries) {
      if (r.errorCode !== 0) throw brokerError(r.errorCode, `client quota of ${describeEntity(r.entity)}`, r.errorMessage);
    }
  }

  /** The quota entities matching `components` (none: every entity) with their values. */
  async describeClientQuotas(components: DescribeClientQuotasRequest['components'] = [], strict = false): Promise<DescribeClientQuotasEntry[]> {
    const res = await this.conn.request(DescribeClientQuotasApi, { components, strict });
    if (res.errorCode !== 0) throw brokerError(res.errorCode, 'describe client quotas', res.errorMessage);
    return res.entries ?? [];
  }

  /** Every topic the broker knows, sorted by name. */
  async listTopics(): Promise<TopicSummary[]> {
    const version = this.conn.versionFor(MetadataApi);
    // v0 has no null array: there, an empty list means "all topics".
    const topics = await this.metadata(version === 0 ? [] : null, version);
    return topics.map(summarize).sort(byName);
  }

  /** Live brokers, controller, cluster id and every topic with its partitions, from one Metadata request. */
  async clusterMetadata(): Promise<ClusterMetadata> {
    const version = this.conn.versionFor(MetadataApi);
    const res = await this.metadataResponse(version === 0 ? [] : null, version);
    return {
      clusterId: res.clusterId,
      controllerId: res.controllerId,
      brokers: res.brokers.map((b) => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack })).sort((a, b) => a.id - b.id),
      topics: res.topics.filter((t) => t.errorCode === 0).map(topicPartitions).sort(byName),
    };
  }

  /** Every registered broker with its standing (fenced ones need DescribeCluster v2; older brokers list the live ones). */
  async describeBrokers(): Promise<BrokerStanding[]> {
    const res = await this.conn.request(DescribeClusterApi, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: true });
    if (res.errorCode !== 0) throw brokerError(res.errorCode, 'DescribeCluster', res.errorMessage);
    return res.brokers.map((b): BrokerStanding => ({
      id: b.brokerId, host: b.host, port: b.port, rack: b.rack,
      state: b.isFenced ? 'fenced' : b.sluiceWarming ? 'warming' : 'running',
      adminAddress: b.sluiceAdminAddress,
    })).sort((a, b) => a.id - b.id);
  }

  /**
   * Every replica each live broker holds (or the brokers named), per log dir, with its size on
   * disk: DescribeLogDirs sent to each broker over a connection of its own, at most
   * MAX_BROKER_DIALS at once. A broker that is not live, cannot be reached or refuses gets an
   * entry with the error; the call itself fails only when the connected broker's Metadata does.
   */
  async describeLogDirs(brokerIds?: readonly number[]): Promise<BrokerLogDirs[]> {
    const live = new Map((await this.metadataResponse([], this.conn.versionFor(MetadataApi))).brokers.map((b) => [b.nodeId, b]));
    const ids = brokerIds === undefined ? [...live.keys()].sort((a, b) => a - b) : [...new Set(brokerIds)];
    return boundedMap(ids, MAX_BROKER_DIALS, async (broker): Promise<BrokerLogDirs> => {
      const b = live.get(broker);
      if (b === undefined) return { broker, error: 'BROKER_NOT_AVAILABLE', logDirs: [] };
      let conn: KafkaConnection | null = null;
      try {
        conn = await KafkaConnection.connect({ ...this.dialOptions, host: b.host, port: b.port });
        return logDirsOf(broker, await conn.request(DescribeLogDirsApi, { topics: null }));
      } catch (err) {
        return { broker, error: err instanceof KafkaError ? errorName(err.code) : (err as Error).message, logDirs: [] };
      } finally {
        await conn?.close();
      }
    });
  }

  async describeTopic(name: string): Promise<TopicDescription> {
    const [t] = await this.metadata([name], this.conn.versionFor(MetadataApi));
    if (t === undefined) throw missingFrom('Metadata', `topic ${name}`);
    if (t.errorCode !== 0) throw brokerError(t.errorCode, `topic ${name}`, null);
    return {
      ...topicPartitions(t),
      configs: this.conn.brokerVersions.has(DescribeConfigsApi.key) ? await this.topicConfigs(name) : null,
    };
  }

  /** The configs of topics and brokers (a broker's own configs are answered only by that broker), in the order asked. */
  describeConfigs(resources: readonly ConfigResource[], keys: readonly string[] | null = null): Promise<ResourceConfigs[]> {
    return describeConfigs(this.conn, resources, keys);
  }

  /** Sets (or deletes, value null) single config keys of topics and brokers. */
  incrementalAlterConfigs(changes: readonly ConfigChange[]): Promise<ConfigChangeOutcome[]> {
    return incrementalAlterConfigs(this.conn, changes);
  }

  listGroups(): Promise<GroupSummary[]> {
    return listGroups(this.conn);
  }

  /** In the order asked; unknown groups come back as state 'Dead' with no members. */
  describeGroups(ids: readonly string[]): Promise<GroupDescription[]> {
    return describeGroups(this.conn, ids);
  }

  fetchGroupOffsets(groupId: string): Promise<CommittedOffset[]> {
    return fetchGroupOffsets(this.conn, groupId);
  }

  /** Admin commit outside any generation: UNKNOWN_MEMBER_ID while the group has members. */
  commitGroupOffsets(groupId: string, offsets: readonly PartitionOffset[]): Promise<void> {
    return commitGroupOffsets(this.conn, groupId, offsets);
  }

  /** NON_EMPTY_GROUP for groups with members, GROUP_ID_NOT_FOUND for unknown ones. */
  deleteGroups(ids: readonly string[]): Promise<void> {
    return deleteGroups(this.conn, ids);
  }

  listOffsets(partitions: readonly TopicPartition[], spec: OffsetSpec): Promise<ListedOffset[]> {
    return listOffsets(this.conn, partitions, spec);
  }

  /** Timestamp of the first record at or after each position; null where there is none. */
  recordTimestamps(positions: readonly PartitionOffset[]): Promise<(number | null)[]> {
    return recordTimestamps(this.conn, positions);
  }

  /** Committed offset, log end, lag in records and seconds, and owner per partition of `group`. */
  groupLag(group: GroupDescription): Promise<PartitionLag[]> {
    return groupLag(this.conn, group);
  }

  close(): Promise<void> {
    return this.conn.close();
  }

  private async metadata(names: string[] | null, version: number): Promise<MetadataResponseTopic[]> {
    return (await this.metadataResponse(names, version)).topics;
  }

  private metadataResponse(names: string[] | null, version: number): Promise<MetadataResponse> {
    return this.conn.request(MetadataApi, {
      topics: names === null ? null : names.map((name) => ({ topicId: ZERO_UUID, name })),
      // Describing a topic must never create it (v4+; older brokers decide for themselves).
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }, version);
  }

  private async topicConfigs(name: string): Promise<TopicConfigEntry[]> {
    const [result] = await describeConfigs(this.conn, [{ type: 'topic', name }]);
    if (result === undefined) throw missingFrom('DescribeConfigs', `configs of ${name}`);
    if (result.errorCode !== 0) throw brokerError(result.errorCode, `configs of ${name}`, result.message);
    return [...result.configs];
  }

}
