// The JSON reports of the admin HTTP beyond health and metrics (main thread): the cluster as this
// broker's metadata image shows it (/v1/cluster), topics with per-partition replication state and
// the hosted replicas' sizes, offsets and append rates (/v1/topics), partitions being reassigned
// (/v1/reassignments) and the consumer groups this broker coordinates with members, assignments
// and lag in records and seconds (/v1/groups). The web console reads these, and so can the CLI
// and scripts: field names follow `sluice group describe --format json` and `sluice topic
// reassignments --format json` where they overlap. Figures of replicas hosted on other brokers
// are null: only their own brokers know them (/v1/cluster/topics asks them, cluster_overview.ts).
// Every listing is bounded; the report says when it was cut.

import { decodeAssignment } from '../protocol/consumer_protocol.js';
import { ProtocolError } from '../protocol/reader.js';
import type { PartitionSnapshot } from '../actors/shard_snapshot.js';
import type { GroupCalls } from '../actors/group_directory.js';
import { isInternalTopic, type BrokerState, type ClusterView } from '../cluster/cluster_view.js';
import type { OffsetHistory } from '../metrics/offset_history.js';
import { asBuffer } from './handlers/group_common.js';

/** Partitions one /v1/topics answer lists (topics in name order; the rest are counted, not listed). */
export const MAX_LISTED_PARTITIONS = 10_000;
/** Groups one /v1/groups answer describes. */
export const MAX_LISTED_GROUPS = 1000;
/** Groups asked about at once (describe and offset fetch), so a large listing does not flood the shards' rings. */
const GROUP_CALL_BATCH = 64;

export interface ClusterReport {
  clusterId: string;
  /** The broker answering. */
  nodeId: number;
  /** -1 when no controller is known. */
  controllerId: number;
  brokers: (BrokerState & { live: boolean })[];
}

export interface PartitionReport {
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: readonly number[];
  isr: readonly number[];
  addingReplicas: readonly number[];
  removingReplicas: readonly number[];
  /** A replica of it lives on this broker: the figures below are this broker's. */
  hosted: boolean;
  sizeBytes: number | null;
  logStartOffset: number | null;
  logEndOffset: number | null;
  highWatermark: number | null;
  /** Records appended per second lately (offset_history.ts); null until a second of history. */
  messagesPerSecond: number | null;
}

export interface TopicReport {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: PartitionReport[];
}

export interface TopicsReport {
  topics: TopicReport[];
  /** Partitions in the cluster, and whether some were left out (MAX_LISTED_PARTITIONS). */
  totalPartitions: number;
  truncated: boolean;
}

export interface ReassignmentReport {
  topic: string;
  partition: number;
  replicas: readonly number[];
  addingReplicas: readonly number[];
  removingReplicas: readonly number[];
  isr: readonly number[];
  /** Adding replicas already in the ISR: the move completes when all are. */
  caughtUp: number;
}

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface GroupMemberReport {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** null when the group's protocol is not the consumer protocol (or its bytes do not decode). */
  assignment: TopicPartitions[] | null;
}

export interface GroupPartitionReport {
  topic: string;
  partition: number;
  committedOffset: number;
  /** null when this broker does not host the partition. */
  logEndOffset: number | null;
  lag: number | null;
  /** How long ago the first record after the committed offset was appended (offset_history.ts); null when unknown. */
  lagSeconds: number | null;
  /** The committed offset predates the broker's history: the lag is at least lagSeconds. */
  lagSecondsAtLeast: boolean;
  memberId: string | null;
}

export interface GroupReport {
  groupId: string;
  groupType: 'classic' | 'consumer';
  state: string;
  protocolType: string;
  protocol: string;
  members: GroupMemberReport[];
  partitions: GroupPartitionReport[];
}

export interface GroupsReport {
  groups: GroupReport[];
  truncated: boolean;
}

export interface AdminReportDeps {
  readonly cluster: ClusterView;
  readonly groups: GroupCalls;
  /** Sizes and offsets of every partition this broker hosts (resets no metric). */
  partitions(): Promise<PartitionSnapshot[]>;
  readonly history: OffsetHistory;
  now(): number;
}

function keyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function sortedAssignment(list: readonly TopicPartitions[]): TopicPartitions[] {
  return list
    .map((t) => ({ topic: t.topic, partitions: [...t.partitions].sort((a, b) => a - b) }))
    .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
}

function classicAssignment(protocolType: string, bytes: Uint8Array): TopicPartitions[] | null {
  if (protocolType !== 'consumer') return null;
  if (bytes.length === 0) return [];
  try {
    return sortedAssignment(decodeAssignment(asBuffer(bytes)).assignedPartitions);
  } catch (err) {
    if (err instanceof ProtocolError) return null;
    throw err;
  }
}

async function inBatches<T, R>(items: readonly T[], run: (batch: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += GROUP_CALL_BATCH) out.push(...(await run(items.slice(i, i + GROUP_CALL_BATCH))));
  return out;
}

export class AdminReports {
  constructor(private readonly deps: AdminReportDeps) {}

  cluster(): ClusterReport {
    const { cluster } = this.deps;
    const live = new Set(cluster.brokers().map((b) => b.id));
    return {
      clusterId: cluster.clusterId,
      nodeId: cluster.localId,
      controllerId: cluster.controllerId(),
      brokers: cluster.brokerStates().map((b) => ({ ...b, live: live.has(b.id) })),
    };
  }

  reassignments(): ReassignmentReport[] {
    const { cluster } = this.deps;
    const out: ReassignmentReport[] = [];
    for (const t of [...cluster.topics()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      for (let p = 0; p < t.partitions; p++) {
        const r = cluster.partition(t.name, p);
        if (r === undefined || (r.addingReplicas.length === 0 && r.removingReplicas.length === 0)) continue;
        out.push({
          topic: t.name, partition: p, replicas: r.replicas, addingReplicas: r.addingReplicas, removingReplicas: r.removingReplicas,
          isr: r.isr, caughtUp: r.addingReplicas.filter((b) => r.isr.includes(b)).length,
        });
      }
    }
    return out;
  }

  async topics(): Promise<TopicsReport> {
    const { cluster, history } = this.deps;
    const hosted = await this.hostedPartitions();
    const now = this.deps.now();
    const topics: TopicReport[] = [];
    let listed = 0;
    let totalPartitions = 0;
    for (const t of [...cluster.topics()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      totalPartitions += t.partitions;
      if (listed + t.partitions > MAX_LISTED_PARTITIONS) continue;
      listed += t.partitions;
      const partitions: PartitionReport[] = [];
      for (let p = 0; p < t.partitions; p++) {
        const r = cluster.partition(t.name, p);
        if (r === undefined) continue;
        const local = hosted.get(keyOf(t.name, p));
        partitions.push({
          partition: p, leader: r.leader, leaderEpoch: r.leaderEpoch, replicas: r.replicas, isr: r.isr,
          addingReplicas: r.addingReplicas, removingReplicas: r.removingReplicas,
          hosted: local !== undefined,
          sizeBytes: local?.sizeBytes ?? null,
          logStartOffset: local?.logStartOffset ?? null,
          logEndOffset: local?.logEndOffset ?? null,
          highWatermark: local?.highWatermark ?? null,
          messagesPerSecond: local === undefined ? null : history.messagesPerSecond(t.name, p, now),
        });
      }
      topics.push({ name: t.name, topicId: t.id, internal: isInternalTopic(t.name), partitions });
    }
    return { topics, totalPartitions, truncated: listed < totalPartitions };
  }

  async groups(): Promise<GroupsReport> {
    const { groups } = this.deps;
    const listedAll = await groups.list({ kind: 'list', statesFilter: [], typesFilter: [] });
    const listed = [...listedAll].sort((a, b) => (a.groupId < b.groupId ? -1 : 1)).slice(0, MAX_LISTED_GROUPS);
    const hosted = await this.hostedPartitions();
    const classicIds = listed.filter((g) => g.type === 'classic').map((g) => g.groupId);
    const consumerIds = listed.filter((g) => g.type === 'consumer').map((g) => g.groupId);
    const classic = await inBatches(classicIds, (ids) => groups.callByGroup({ kind: 'describe', groupIds: ids }, (r) => (r.kind === 'describe' ? r.groups : [])));
    const described = classic.map((g): Omit<GroupReport, 'partitions'> => ({
      groupId: g.groupId, groupType: 'classic', state: g.state, protocolType: g.protocolType, protocol: g.protocol,
      members: g.members.map((m) => ({
        memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
        assignment: classicAssignment(g.protocolType, m.assignment),
      })),
    }));
    const consumer = await inBatches(consumerIds, (ids) => groups.callByGroup({ kind: 'consumerDescribe', groupIds: ids }, (r) => (r.kind === 'consumerDescribe' ? r.groups : [])));
    for (const g of consumer) {
      described.push({
        groupId: g.groupId, groupType: 'consumer', state: g.state, protocolType: 'consumer', protocol: g.assignorName,
        members: g.members.map((m) => ({
          memberId: m.memberId, groupInstanceId: m.instanceId, clientId: m.clientId, clientHost: m.clientHost,
          assignment: sortedAssignment(m.assignment.map((a) => ({ topic: a.topicName, partitions: a.partitions }))),
        })),
      });
    }
    const reports = await inBatches(described, (batch) => Promise.all(batch.map((g) => this.withOffsets(g, hosted))));
    return { groups: reports.sort((a, b) => (a.groupId < b.groupId ? -1 : 1)), truncated: listedAll.length > listed.length };
  }

  private async withOffsets(g: Omit<GroupReport, 'partitions'>, hosted: ReadonlyMap<string, PartitionSnapshot>): Promise<GroupReport> {
    const { groups, history } = this.deps;
    const now = this.deps.now();
    const reply = await groups.call(g.groupId, { kind: 'offsetFetch', groupId: g.groupId, topics: null, requireStable: false, memberId: null, memberEpoch: -1 });
    const owners = new Map<string, string>();
    for (const m of g.members) for (const t of m.assignment ?? []) for (const p of t.partitions) owners.set(keyOf(t.topic, p), m.memberId);
    const partitions: GroupPartitionReport[] = [];
    for (const t of reply.topics) {
      for (const p of t.partitions) {
        if (p.errorCode !== 0 || p.offset < 0) continue;
        const end = hosted.get(keyOf(t.name, p.partition))?.logEndOffset ?? null;
        const lagSeconds = end === null ? null : history.lagSeconds(t.name, p.partition, p.offset, now);
        partitions.push({
          topic: t.name, partition: p.partition, committedOffset: p.offset, logEndOffset: end,
          lag: end === null ? null : Math.max(0, end - p.offset),
          lagSeconds: lagSeconds?.seconds ?? null, lagSecondsAtLeast: lagSeconds?.atLeast ?? false,
          memberId: owners.get(keyOf(t.name, p.partition)) ?? null,
        });
      }
    }
    partitions.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
    return { ...g, partitions };
  }

  /** The hosted partitions' figures by topic and partition. */
  private async hostedPartitions(): Promise<Map<string, PartitionSnapshot>> {
    const list = await this.deps.partitions();
    return new Map(list.map((p) => [keyOf(p.topic, p.partition), p]));
  }
}
