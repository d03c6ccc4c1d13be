// The whole cluster on one page, from whichever broker is asked (main thread): GET /v1/broker is a
// broker's own figures (health, cumulative traffic, event-loop delay), and GET /v1/cluster/overview
// and /v1/cluster/topics ask every registered broker's admin HTTP (the address each registration
// carries through the metadata log) for its /v1/broker or /v1/topics, in parallel, each with a
// short deadline and a bound on the answer's size, and merge the answers with this broker's own.
// A broker that does not answer gets `reachable: false` and the reason, never a failed page.
// Only MAX_ASKED_BROKERS brokers are asked (live ones first). The merges are pure functions of the
// answers; the I/O is the thin fan-out below. Peers speak HTTPS when this admin HTTP does (the
// cluster's brokers share their admin settings), trusted when their certificate chains to a
// default CA or to a root in this broker's own --admin-ssl-cert-file (self-signed, or a chain
// that includes its root), and get this broker's bearer token when one is configured.
// Rates and p99s are not computed here: readers diff two readings of the cumulative traffic, as
// the console does with /v1/traffic, so the server keeps no state per reader.

import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { QuorumReport } from '../actors/quorum/quorum_report.js';
import type { ClusterView } from '../cluster/cluster_view.js';
import { countPartitions } from '../metrics/replication_metrics.js';
import type { TrafficTotals } from '../metrics/metrics.js';
import type { AdminReports, ClusterReport, PartitionReport, TopicsReport } from './admin_reports.js';

/** Brokers one overview asks; the rest are listed as not asked. */
export const MAX_ASKED_BROKERS = 64;
/** Deadline of one peer's answer, body included: a slow broker must not hold the page. */
export const PEER_TIMEOUT_MS = 1000;
/** Bound on one peer's answer (a /v1/topics of 10,000 partitions stays far below). */
export const MAX_PEER_ANSWER_BYTES = 32 * 1024 * 1024;

/** What a broker says about itself (GET /v1/broker). */
export interface BrokerFigures {
  nodeId: number;
  /** 'ready', 'starting' or 'draining'. */
  status: string;
  failing: readonly string[];
  /** Cumulative since the broker started; `atMs` is when it was read (ms since the epoch). */
  traffic: TrafficTotals & { atMs: number };
  /** The highest p99 event-loop delay among its shards since the last metrics scrape; null without shards. */
  loopDelayP99Ms: number | null;
}

/** One peer's answer: its JSON, or why there is none. */
export type PeerAnswer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export interface BrokerOverview {
  id: number;
  host: string | null;
  port: number;
  rack: string | null;
  adminAddress: string | null;
  fenced: boolean;
  warming: boolean;
  live: boolean;
  controller: boolean;
  /** Its admin HTTP answered. */
  reachable: boolean;
  /** Why it is not reachable (refused, timed out, HTTP status, not asked); null when it is. */
  error: string | null;
  figures: BrokerFigures | null;
}

export interface ClusterOverview {
  clusterId: string;
  /** The broker that answered (and merged). */
  nodeId: number;
  controllerId: number;
  atMs: number;
  /** The metadata quorum as this node sees it; null on a node without one. */
  quorum: QuorumReport | null;
  /** Partitions whose ISR is smaller than their replica set, cluster-wide. */
  underReplicatedPartitions: number;
  /** Partitions without a leader. */
  offlinePartitions: number;
  brokers: BrokerOverview[];
}

/** A partition with its figures from the broker named in `figuresFrom` (its leader when it answered). */
export interface ClusterPartitionReport extends PartitionReport {
  /** The broker whose replica the size, offsets and rate are; null when no hosting broker answered. */
  figuresFrom: number | null;
}

export interface ClusterTopicsReport extends Omit<TopicsReport, 'topics'> {
  topics: (Omit<TopicsReport['topics'][number], 'partitions'> & { partitions: ClusterPartitionReport[] })[];
  /** Which brokers answered: a partition hosted only on others has no figures. */
  brokers: { id: number; reachable: boolean; error: string | null }[];
}

/** The brokers to ask, live first then by id, with the reason for each one left out. */
export function brokersToAsk(cluster: ClusterReport): { ask: { id: number; adminAddress: string }[]; left: Map<number, string> } {
  const ordered = [...cluster.brokers].sort((a, b) => Number(b.live && !b.fenced) - Number(a.live && !a.fenced) || a.id - b.id);
  const ask: { id: number; adminAddress: string }[] = [];
  const left = new Map<number, string>();
  for (const b of ordered) {
    if (b.adminAddress === null) left.set(b.id, 'registered no admin address');
    else if (ask.length >= MAX_ASKED_BROKERS) left.set(b.id, `not asked: only ${MAX_ASKED_BROKERS} brokers are`);
    else ask.push({ id: b.id, adminAddress: b.adminAddress });
  }
  return { ask, left };
}

function answerOf<T>(id: number, answers: ReadonlyMap<number, PeerAnswer<T>>, left: ReadonlyMap<number, string>): PeerAnswer<T> {
  return answers.get(id) ?? { ok: false, error: left.get(id) ?? 'not asked' };
}

/** Every registered broker with its standing from the metadata image and its own figures, or why they are missing (pure). */
export function mergeOverview(
  cluster: ClusterReport, quorum: QuorumReport | null, counts: { underReplicated: number; offline: number },
  answers: ReadonlyMap<number, PeerAnswer<BrokerFigures>>, atMs: number,
): ClusterOverview {
  const { left } = brokersToAsk(cluster);
  return {
    clusterId: cluster.clusterId, nodeId: cluster.nodeId, controllerId: cluster.controllerId, atMs, quorum,
    underReplicatedPartitions: counts.underReplicated, offlinePartitions: counts.offline,
    brokers: [...cluster.brokers].sort((a, b) => a.id - b.id).map((b) => {
      const answer = answerOf(b.id, answers, left);
      return {
        id: b.id, host: b.host, port: b.port, rack: b.rack, adminAddress: b.adminAddress, fenced: b.fenced, warming: b.warming,
        live: b.live, controller: b.id === cluster.controllerId,
        reachable: answer.ok, error: answer.ok ? null : answer.error, figures: answer.ok ? answer.value : null,
      };
    }),
  };
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** The hosted partitions of one broker's /v1/topics answer, by topic and partition. */
function hostedIndex(report: TopicsReport): Map<string, PartitionReport> {
  const out = new Map<string, PartitionReport>();
  for (const t of report.topics) for (const p of t.partitions) if (p.hosted) out.set(partitionKey(t.name, p.partition), p);
  return out;
}

/**
 * This broker's topic listing with each partition's size, offsets and rate taken from the broker
 * that hosts it: the leader when it answered, else the first replica in the replica list that did
 * (pure). `hosted` keeps its meaning (a replica lives on the answering broker).
 */
export function mergeTopics(local: TopicsReport, localId: number, answers: ReadonlyMap<number, PeerAnswer<TopicsReport>>, brokerIds: readonly number[]): ClusterTopicsReport {
  const indexes = new Map<number, Map<string, PartitionReport>>([[localId, hostedIndex(local)]]);
  for (const [id, a] of answers) if (a.ok && id !== localId) indexes.set(id, hostedIndex(a.value));
  const topics = local.topics.map((t) => ({
    ...t,
    partitions: t.partitions.map((p): ClusterPartitionReport => {
      const key = partitionKey(t.name, p.partition);
      for (const b of [p.leader, ...p.replicas]) {
        const found = indexes.get(b)?.get(key);
        if (found === undefined) continue;
        return {
          ...p, figuresFrom: b, sizeBytes: found.sizeBytes, logStartOffset: found.logStartOffset, logEndOffset: found.logEndOffset,
          highWatermark: found.highWatermark, messagesPerSecond: found.messagesPerSecond,
        };
      }
      return { ...p, figuresFrom: null };
    }),
  }));
  const brokers = [...brokerIds].sort((a, b) => a - b).map((id) => {
    const a = id === localId ? { ok: true as const } : answers.get(id) ?? { ok: false as const, error: 'not asked' };
    return { id, reachable: a.ok, error: a.ok ? null : a.error };
  });
  return { ...local, topics, brokers };
}

/** Reads one peer's answer: HTTP 200 with JSON, within the deadline and the size bound. */
export type PeerGet = (url: string, headers: Record<string, string>, timeoutMs: number) => Promise<unknown>;

function bodyOf(res: IncomingMessage, url: string, resolve: (v: unknown) => void, reject: (e: Error) => void): void {
  if (res.statusCode !== 200) {
    res.resume();
    reject(new Error(`HTTP ${res.statusCode ?? '?'} from ${url}`));
    return;
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  res.on('data', (c: Buffer) => {
    bytes += c.length;
    if (bytes > MAX_PEER_ANSWER_BYTES) res.destroy(new Error(`answer from ${url} passes ${MAX_PEER_ANSWER_BYTES} bytes`));
    else chunks.push(c);
  });
  res.on('error', reject);
  res.on('end', () => {
    try {
      resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      reject(new Error(`${url} answered no JSON`));
    }
  });
}

/** node:http(s) GET; HTTPS trusts the default CAs plus `extraCa()` (this broker's own chain, as loaded now). */
export function peerGet(extraCa: () => readonly (string | Buffer)[]): PeerGet {
  return (url, headers, timeoutMs) => new Promise((resolve, reject) => {
    const ca = [...rootCertificates, ...extraCa()];
    const signal = AbortSignal.timeout(timeoutMs);
    const onAnswer = (res: IncomingMessage): void => bodyOf(res, url, resolve, reject);
    const req = url.startsWith('https:') ? httpsGet(url, { headers, signal, ca }, onAnswer) : httpGet(url, { headers, signal }, onAnswer);
    req.on('error', (err) => reject(signal.aborted ? new Error(`no answer within ${timeoutMs} ms`) : err));
  });
}

export interface ClusterFanoutDeps {
  readonly reports: Pick<AdminReports, 'cluster' | 'topics'>;
  readonly view: Pick<ClusterView, 'localId' | 'revision' | 'controllerId' | 'topics' | 'partition'>;
  /** This broker's own figures (what /v1/broker answers). */
  own(): Promise<BrokerFigures>;
  quorum(): QuorumReport | null;
  readonly scheme: 'http' | 'https';
  /** The Authorization header peers get; undefined sends none. */
  authorization(): string | undefined;
  readonly get: PeerGet;
  readonly timeoutMs?: number;
  now(): number;
}

export class ClusterFanout {
  constructor(private readonly deps: ClusterFanoutDeps) {}

  own(): Promise<BrokerFigures> {
    return this.deps.own();
  }

  async overview(): Promise<ClusterOverview> {
    const cluster = this.deps.reports.cluster();
    const answers = await this.ask<BrokerFigures>(cluster, '/v1/broker', () => this.deps.own(), isFigures);
    const counts = countPartitions(this.deps.view);
    return mergeOverview(cluster, this.deps.quorum(), { underReplicated: counts.clusterUnderReplicated, offline: counts.offline }, answers, this.deps.now());
  }

  async topics(): Promise<ClusterTopicsReport> {
    const cluster = this.deps.reports.cluster();
    const local = await this.deps.reports.topics();
    const answers = await this.ask<TopicsReport>(cluster, '/v1/topics', async () => local, isTopics);
    return mergeTopics(local, cluster.nodeId, answers, cluster.brokers.map((b) => b.id));
  }

  /**
   * Asks every broker to ask at once (this broker answers from `self` without a request); the
   * brokers left out are answered with the reason.
   */
  private async ask<T>(cluster: ClusterReport, path: string, self: () => Promise<T>, valid: (v: unknown) => v is T): Promise<Map<number, PeerAnswer<T>>> {
    const { ask, left } = brokersToAsk(cluster);
    const auth = this.deps.authorization();
    const headers: Record<string, string> = auth === undefined ? {} : { authorization: auth };
    const timeoutMs = this.deps.timeoutMs ?? PEER_TIMEOUT_MS;
    const answered = await Promise.all(ask.map(async ({ id, adminAddress }): Promise<[number, PeerAnswer<T>]> => {
      try {
        const value = id === cluster.nodeId ? await self() : await this.deps.get(`${this.deps.scheme}://${adminAddress}${path}`, headers, timeoutMs);
        return [id, valid(value) ? { ok: true, value } : { ok: false, error: `${path} answered an unexpected shape` }];
      } catch (err) {
        return [id, { ok: false, error: err instanceof Error ? err.message : String(err) }];
      }
    }));
    return new Map([...answered, ...[...left].map(([id, error]): [number, PeerAnswer<T>] => [id, { ok: false, error }])]);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function isFigures(v: unknown): v is BrokerFigures {
  return isObject(v) && typeof v['nodeId'] === 'number' && typeof v['status'] === 'string' && Array.isArray(v['failing']) && isObject(v['traffic']);
}

function isTopics(v: unknown): v is TopicsReport {
  return isObject(v) && Array.isArray(v['topics']) && v['topics'].every((t) => isObject(t) && typeof t['name'] === 'string' && Array.isArray(t['partitions']));
}
