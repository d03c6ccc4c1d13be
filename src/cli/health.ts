// Replication health as the `sluice` command line judges it (CLI process, pure: no I/O). From one
// Metadata answer it finds the partitions that are under-replicated (ISR smaller than the replica
// set), leaderless (leader -1) or hold replicas on brokers that are not live, and decides the
// verdict of `sluice cluster health`; the text layouts of that verdict, of the affected-partition
// listing (`sluice topic describe --under-replicated|--unavailable`) and of `sluice cluster
// describe` live beside it so tests can read them without a broker.

import type { ClusterMetadata, PartitionInfo, TopicPartitions } from '../client/admin.js';
import { table } from './io.js';

/** Exit code of `sluice cluster health` while a partition is under-replicated, leaderless or has an offline replica. */
export const UNHEALTHY_EXIT_CODE = 3;

/** How many affected partitions a health report names; the counts always cover every partition. */
export const HEALTH_LISTED_PARTITIONS = 20;

export interface AffectedPartition extends PartitionInfo {
  topic: string;
}

export interface ClusterHealth {
  /** No partition under-replicated or leaderless, and no replica on a broker that is not live. */
  healthy: boolean;
  clusterId: string | null;
  controllerId: number;
  /** Live brokers, ascending. */
  brokers: number[];
  /** Brokers named as replicas that are not live, ascending. */
  offlineBrokers: number[];
  partitions: number;
  underReplicated: number;
  leaderless: number;
  /** Replicas (one per partition and broker) on brokers that are not live. */
  offlineReplicas: number;
  /** Partitions under-replicated, leaderless or with an offline replica. */
  unhealthyPartitions: number;
  /** The first HEALTH_LISTED_PARTITIONS unhealthy partitions, by topic and partition. */
  affected: AffectedPartition[];
}

/** Which partitions a listing keeps: under-replicated ones, leaderless (unavailable) ones, or both. */
export interface PartitionFilter {
  readonly underReplicated: boolean;
  readonly unavailable: boolean;
}

function offlineOf(p: PartitionInfo, live: ReadonlySet<number>): number[] {
  return p.replicas.filter((r) => !live.has(r));
}

function isUnhealthy(p: PartitionInfo, live: ReadonlySet<number>): boolean {
  return p.underReplicated || p.leaderless || offlineOf(p, live).length > 0;
}

/** The verdict over every partition of every topic the answer holds, internal topics included. */
export function clusterHealth(meta: ClusterMetadata): ClusterHealth {
  const live = new Set(meta.brokers.map((b) => b.id));
  const offlineBrokers = new Set<number>();
  const affected: AffectedPartition[] = [];
  let partitions = 0;
  let underReplicated = 0;
  let leaderless = 0;
  let offlineReplicas = 0;
  let unhealthyPartitions = 0;
  for (const t of meta.topics) {
    for (const p of t.partitionDetails) {
      partitions++;
      if (p.underReplicated) underReplicated++;
      if (p.leaderless) leaderless++;
      const offline = offlineOf(p, live);
      offlineReplicas += offline.length;
      for (const b of offline) offlineBrokers.add(b);
      if (!isUnhealthy(p, live)) continue;
      unhealthyPartitions++;
      if (affected.length < HEALTH_LISTED_PARTITIONS) affected.push({ topic: t.name, ...p });
    }
  }
  return {
    healthy: unhealthyPartitions === 0,
    clusterId: meta.clusterId,
    controllerId: meta.controllerId,
    brokers: [...live].sort((a, b) => a - b),
    offlineBrokers: [...offlineBrokers].sort((a, b) => a - b),
    partitions,
    underReplicated,
    leaderless,
    offlineReplicas,
    unhealthyPartitions,
    affected,
  };
}

/** Partitions of `topics` that match the filter, in topic then partition order. */
export function affectedPartitions(topics: readonly TopicPartitions[], filter: PartitionFilter): AffectedPartition[] {
  return topics.flatMap((t) => t.partitionDetails
    .filter((p) => (filter.underReplicated && p.underReplicated) || (filter.unavailable && p.leaderless))
    .map((p) => ({ topic: t.name, ...p })));
}

/** "ok", or what is wrong with the partition: "leaderless", "under-replicated" or both. */
export function partitionStatus(p: PartitionInfo): string {
  const problems = [p.leaderless ? 'leaderless' : '', p.underReplicated ? 'under-replicated' : ''].filter((s) => s !== '');
  return problems.length === 0 ? 'ok' : problems.join(',');
}

function brokerIds(ns: readonly number[]): string {
  return `[${ns.join(',')}]`;
}

/** One row per partition: leader, epoch, replicas, ISR, offline replicas and status. */
export function partitionRows(rows: readonly { topic?: string; p: PartitionInfo }[]): string {
  const withTopic = rows.some((r) => r.topic !== undefined);
  const head = ['PARTITION', 'LEADER', 'EPOCH', 'REPLICAS', 'ISR', 'OFFLINE', 'STATUS'];
  return table([
    withTopic ? ['TOPIC', ...head] : head,
    ...rows.map(({ topic, p }) => {
      const cells = [
        String(p.partition), String(p.leader), String(p.leaderEpoch),
        brokerIds(p.replicas), brokerIds(p.isr), brokerIds(p.offlineReplicas), partitionStatus(p),
      ];
      return withTopic ? [topic ?? '', ...cells] : cells;
    }),
  ]);
}

export function affectedText(list: readonly AffectedPartition[]): string {
  if (list.length === 0) return '(no partitions affected)';
  return partitionRows(list.map((p) => ({ topic: p.topic, p })));
}

export function healthText(h: ClusterHealth): string {
  const verdict = h.healthy ? 'healthy' : 'unhealthy';
  const summary = table([
    ['cluster id', h.clusterId ?? '(unknown)'],
    ['controller', h.controllerId < 0 ? '(none)' : String(h.controllerId)],
    ['brokers up', `${h.brokers.length} ${brokerIds(h.brokers)}`],
    ['offline brokers', `${h.offlineBrokers.length} ${brokerIds(h.offlineBrokers)}`],
    ['partitions', String(h.partitions)],
    ['under-replicated', String(h.underReplicated)],
    ['leaderless', String(h.leaderless)],
    ['offline replicas', String(h.offlineReplicas)],
    ['verdict', verdict],
  ]);
  if (h.affected.length === 0) return summary;
  const more = h.unhealthyPartitions > h.affected.length ? `\n(first ${h.affected.length} of ${h.unhealthyPartitions} shown)` : '';
  return `${summary}\n\n${affectedText(h.affected)}${more}`;
}

export function clusterText(meta: ClusterMetadata): string {
  const summary = table([
    ['cluster id', meta.clusterId ?? '(unknown)'],
    ['controller', meta.controllerId < 0 ? '(none)' : String(meta.controllerId)],
  ]);
  const brokers = table([
    ['BROKER', 'HOST', 'PORT', 'RACK', 'CONTROLLER'],
    ...meta.brokers.map((b) => [String(b.id), b.host, String(b.port), b.rack ?? '-', b.id === meta.controllerId ? 'yes' : '']),
  ]);
  return `${summary}\n\n${brokers}`;
}
