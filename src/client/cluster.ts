// Our client's view of a Kafka cluster (Sluice or Apache Kafka): one pooled connection per
// broker, the topic metadata cache and the group coordinator cache. Runs on whichever thread owns
// the producer or consumer using it.
// Invariants: at most one connection attempt per broker at a time (callers share it); after a
// failed attempt the next one waits a full-jitter backoff that grows with consecutive failures;
// a lost connection is redialled after such a backoff too (ReconnectBackoff); concurrent
// metadata refreshes share one request; a cached partition's leader epoch never goes
// back while its topic is cached (KIP-951 hints and lagging Metadata answers alike); every map is
// bounded by the cluster's own answers (brokers, topics asked for), never by record data.
import { setTimeout as sleep } from 'node:timers/promises';
import { FindCoordinatorApi } from '../protocol/apis/find_coordinator.js';
import { MetadataApi } from '../protocol/apis/metadata.js';
import type { MetadataResponse } from '../protocol/apis/metadata.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/schema.js';
import type { BackoffOptions } from '../protocol/backoff.js';
import { brokerError } from './broker_errors.js';
import { ConnectionError, KafkaConnection } from './connection.js';
import type { ConnectionOptions } from './connection.js';
import { judgeHint, newerPartition, withHintedLeader } from './leader_hints.js';
import { RECONNECT_BACKOFF, ReconnectBackoff } from './reconnect.js';
import type { HintVerdict, LeaderHint, PartitionMetadata, TopicMetadata } from './leader_hints.js';

export type { LeaderHint, PartitionMetadata, TopicMetadata } from './leader_hints.js';

export interface ClusterOptions {
  /** Bootstrap addresses, 'host:port' (or one comma-separated string). */
  brokers: readonly string[] | string;
  clientId?: string;
  /** Per request; default 30 s. */
  requestTimeoutMs?: number;
  /** Reconnect backoff (full jitter), after a failed attempt or a lost connection; defaults 50 ms growing to 1 s (Kafka's). */
  reconnectBackoff?: BackoffOptions;
  /** Cached topic metadata older than this is refreshed on next use; default 5 min. */
  metadataMaxAgeMs?: number;
  /** Requests on the wire per connection (pipelining); default 16. */
  maxInflight?: number;
  /** Topics whose metadata is cached at once; default 10,000. */
  maxTopics?: number;
}

/** Errors after which the cached leader or topic is probably wrong. */
const STALE_METADATA: ReadonlySet<number> = new Set([
  ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.KAFKA_STORAGE_ERROR,
]);

/** Errors after which the group's coordinator must be looked up again. */
const STALE_COORDINATOR: ReadonlySet<number> = new Set([
  ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE,
]);

export function isStaleMetadataError(code: number): boolean {
  return STALE_METADATA.has(code);
}

export function isStaleCoordinatorError(code: number): boolean {
  return STALE_COORDINATOR.has(code);
}

interface BrokerSlot {
  host: string;
  port: number;
  conn: KafkaConnection | null;
  connecting: Promise<KafkaConnection> | null;
  readonly backoff: ReconnectBackoff;
}

const BOOTSTRAP_BASE = -1_000_000;

function parseAddress(addr: string): { host: string; port: number } {
  const at = addr.lastIndexOf(':');
  const port = Number(addr.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new TypeError(`broker address "${addr}" is not host:port`);
  }
  return { host: addr.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port };
}

export class Cluster {
  private readonly slots = new Map<number, BrokerSlot>();
  private readonly bootstrapIds: number[] = [];
  private readonly topics = new Map<string, TopicMetadata>();
  private readonly coordinators = new Map<string, number>();
  private refreshing: Promise<void> | null = null;
  private readonly wanted = new Set<string>();
  private closed = false;
  readonly clientId: string;

  constructor(private readonly options: ClusterOptions) {
    this.clientId = options.clientId ?? 'sluice';
    const list = typeof options.brokers === 'string' ? options.brokers.split(',') : options.brokers;
    list.forEach((addr, i) => {
      const id = BOOTSTRAP_BASE - i;
      this.slots.set(id, { ...parseAddress(addr.trim()), conn: null, connecting: null, backoff: this.newBackoff() });
      this.bootstrapIds.push(id);
    });
    if (this.bootstrapIds.length === 0) throw new TypeError('no bootstrap brokers given');
  }

  /** A live connection to broker `nodeId`, connecting (after any backoff) when needed. */
  async connection(nodeId: number): Promise<KafkaConnection> {
    if (this.closed) throw new ConnectionError('client closed');
    const slot = this.slots.get(nodeId);
    if (slot === undefined) {
      await this.refresh();
      if (!this.slots.has(nodeId)) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `broker ${nodeId} is not in the cluster metadata`);
      return this.connection(nodeId);
    }
    if (slot.conn?.isOpen) return slot.conn;
    if (slot.conn !== null && slot.connecting === null) {
      slot.conn = null;
      slot.backoff.failed(Date.now());
    }
    slot.connecting ??= this.open(slot).finally(() => {
      slot.connecting = null;
    });
    return slot.connecting;
  }

  /** Any live broker: a known broker first, then the bootstrap list, in order. */
  async anyConnection(): Promise<KafkaConnection> {
    for (const slot of this.slots.values()) if (slot.conn?.isOpen) return slot.conn;
    const order = [...this.slots.keys()].filter((id) => id >= 0).concat(this.bootstrapIds);
    let last: unknown = new ConnectionError('no brokers');
    for (const id of order) {
      try {
        return await this.connection(id);
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  /** Metadata for `topic`, refreshed when missing, stale-marked or older than metadataMaxAgeMs. */
  async topic(name: string): Promise<TopicMetadata> {
    const cached = this.cachedTopic(name);
    if (cached !== undefined) return cached;
    this.wanted.add(name);
    await this.refresh();
    // A refresh already under way when we asked did not include `name`: ask again.
    if (this.wanted.has(name)) await this.refresh();
    const t = this.topics.get(name);
    if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name} does not exist`);
    return t;
  }

  /** Cached metadata without I/O (undefined when absent or too old). */
  cachedTopic(name: string): TopicMetadata | undefined {
    const t = this.topics.get(name);
    if (t === undefined) return undefined;
    if (Date.now() - t.fetchedAt > (this.options.metadataMaxAgeMs ?? 300_000)) return undefined;
    return t;
  }

  /** The leader of a partition per the cache; -1 when unknown. */
  leaderOf(topic: string, partition: number): number {
    return this.topics.get(topic)?.partitions[partition]?.leader ?? -1;
  }

  /** The cached leader epoch of a partition; -1 when unknown. */
  leaderEpochOf(topic: string, partition: number): number {
    return this.topics.get(topic)?.partitions[partition]?.leaderEpoch ?? -1;
  }

  /**
   * Applies a KIP-951 leader hint from a NOT_LEADER_OR_FOLLOWER answer. `apply`: the cache now
   * names the hinted leader (its endpoint learnt if the broker was unknown) and callers may send
   * to it at once; otherwise the caller falls back to markStale and a Metadata refresh.
   */
  applyLeaderHint(hint: LeaderHint): HintVerdict {
    const cached = this.topics.get(hint.topic);
    const verdict = judgeHint(cached, hint);
    if (verdict !== 'apply' || cached === undefined) return verdict;
    if (hint.endpoint !== null && !this.slots.has(hint.leaderId)) this.learnBroker(hint.leaderId, hint.endpoint.host, hint.endpoint.port);
    this.topics.set(hint.topic, withHintedLeader(cached, hint));
    return verdict;
  }

  /**
   * After broker `refusedBy` answered NOT_LEADER_OR_FOLLOWER with `hint`: true when the cache
   * (hint applied) names another leader to try at once; false after marking the topic stale,
   * so the next use asks the cluster.
   */
  followLeaderHint(hint: LeaderHint, refusedBy: number): boolean {
    this.applyLeaderHint(hint);
    const leader = this.leaderOf(hint.topic, hint.partition);
    if (leader >= 0 && leader !== refusedBy) return true;
    this.markStale(hint.topic);
    return false;
  }

  /** Forget `topic`'s metadata so the next use asks the cluster again (after NOT_LEADER etc.). */
  markStale(topic: string): void {
    this.topics.delete(topic);
  }

  /** One Metadata request for every topic in use; concurrent callers share it. */
  refresh(): Promise<void> {
    this.refreshing ??= this.fetchMetadata().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** The connection to `groupId`'s coordinator (FindCoordinator, cached until forgotten). */
  async coordinator(groupId: string): Promise<KafkaConnection> {
    const known = this.coordinators.get(groupId);
    if (known !== undefined) return this.connection(known);
    const conn = await this.anyConnection();
    const v = conn.versionFor(FindCoordinatorApi);
    const res = await conn.request(FindCoordinatorApi, { key: groupId, keyType: 0, coordinatorKeys: [groupId] }, v);
    const c = v >= 4 ? res.coordinators.find((x) => x.key === groupId) : res;
    if (c === undefined) throw brokerError(ErrorCode.UNKNOWN_SERVER_ERROR, `group ${groupId}`, 'no coordinator in the answer');
    if (c.errorCode !== ErrorCode.NONE) throw brokerError(c.errorCode, `FindCoordinator ${groupId}`, c.errorMessage);
    this.learnBroker(c.nodeId, c.host, c.port);
    if (this.coordinators.size >= (this.options.maxTopics ?? 10_000)) this.coordinators.clear();
    this.coordinators.set(groupId, c.nodeId);
    return this.connection(c.nodeId);
  }

  forgetCoordinator(groupId: string): void {
    this.coordinators.delete(groupId);
  }

  async close(): Promise<void> {
    this.closed = true;
    const conns = [...this.slots.values()].map((s) => s.conn).filter((c): c is KafkaConnection => c !== null);
    await Promise.all(conns.map((c) => c.close()));
  }

  private async open(slot: BrokerSlot): Promise<KafkaConnection> {
    const wait = slot.backoff.waitMs(Date.now());
    if (wait > 0) await sleep(wait);
    const opts: ConnectionOptions = {
      host: slot.host, port: slot.port, clientId: this.clientId,
      requestTimeoutMs: this.options.requestTimeoutMs ?? 30_000, maxInflight: this.options.maxInflight ?? 16,
    };
    try {
      const conn = await KafkaConnection.connect(opts);
      if (this.closed) {
        await conn.close();
        throw new ConnectionError('client closed');
      }
      slot.backoff.connected();
      slot.conn = conn;
      return conn;
    } catch (err) {
      slot.backoff.failed(Date.now());
      throw err;
    }
  }

  private async fetchMetadata(): Promise<void> {
    const conn = await this.anyConnection();
    const names = [...this.wanted, ...this.topics.keys()];
    const unique = [...new Set(names)].slice(0, this.options.maxTopics ?? 10_000);
    const res = await conn.request(MetadataApi, {
      topics: unique.map((name) => ({ name, topicId: ZERO_UUID })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    this.apply(res);
  }

  private apply(res: MetadataResponse): void {
    for (const b of res.brokers) this.learnBroker(b.nodeId, b.host, b.port);
    const now = Date.now();
    for (const t of res.topics) {
      if (t.name === null) continue;
      this.wanted.delete(t.name);
      if (t.errorCode !== ErrorCode.NONE) {
        this.topics.delete(t.name);
        continue;
      }
      const cached = this.topics.get(t.name);
      const partitions: PartitionMetadata[] = [];
      for (const p of t.partitions) {
        const fresh = { partition: p.partitionIndex, leader: p.errorCode === ErrorCode.NONE || p.leaderId >= 0 ? p.leaderId : -1, leaderEpoch: p.leaderEpoch };
        partitions[p.partitionIndex] = newerPartition(cached, t.topicId, fresh);
      }
      this.topics.set(t.name, { name: t.name, topicId: t.topicId, partitions, fetchedAt: now });
    }
  }

  /** Records (or moves) a broker's address; a moved broker's old connection is dropped. */
  private learnBroker(nodeId: number, host: string, port: number): void {
    const slot = this.slots.get(nodeId);
    if (slot !== undefined && slot.host === host && slot.port === port) return;
    if (slot?.conn) void slot.conn.close();
    this.slots.set(nodeId, { host, port, conn: null, connecting: null, backoff: this.newBackoff() });
  }

  private newBackoff(): ReconnectBackoff {
    return new ReconnectBackoff(this.options.reconnectBackoff ?? RECONNECT_BACKOFF);
  }
}
