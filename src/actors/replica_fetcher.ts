// The replica fetchers of one shard worker: one fetch loop per leader broker, pulling every
// partition of this shard that follows that leader over one KafkaLink (kafka_link.ts) to the
// leader's Kafka listener, as Kafka's ReplicaFetcherThread does per (source broker, fetcher id).
// Lives on the shard worker thread. The partition side (what to ask, what to do with the answer)
// is the FollowedPartition the partition actor implements; this file owns the request loop, the
// mapping of answers back to partitions, and the connection's failures and backoff.
// Invariants: one request in flight per fetcher; a partition is in a request only while it has a
// position and no earlier answer of it is still settling; an answer reaches a partition only if
// it is still followed by the same add() as when the request went out and the fetcher is open;
// records held by settling answers plus the next request's byte budget stay within maxBytes.
// Follower throttle (KIP-73): the shard's fetchers share one quota (its share of the broker's
// follower.replication.throttled.rate); while it is exceeded, throttled partitions (listed and out
// of the ISR, as the partition says) are left out of requests, and their answers' bytes count.
import type { Logger } from '../common/logger.js';
import type { DivergingEpoch, ReplicaFetchAnswer, ReplicaFetchPosition } from '../coordinator/replication/types.js';
import { FetchApi, type FetchRequest, type FetchRequestTopic, type FetchResponse, type FetchResponseEpochEndOffset } from '../protocol/apis/fetch.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { wholeBatchesLength } from '../protocol/record_batch.js';
import { ZERO_UUID, decodedRecords } from '../protocol/schema.js';
import { ThrottleQuota } from '../coordinator/replication/throttle_quota.js';
import { PeerAuthenticationError, type PeerSecurity } from '../common/peer_socket.js';
import { KafkaLink, type LinkBytes } from './kafka_link.js';

/** What a replica fetcher needs of one followed partition; the partition actor implements it. */
export interface FollowedPartition {
  /** 32 hex chars. */
  readonly topicId: string;
  readonly partition: number;
  /** Whether its catch-up counts against the follower replication throttle (listed, out of the ISR). */
  readonly throttled: boolean;
  /** Where to fetch from now, or null while nothing should be asked (truncating, backing off, awaiting durability). */
  fetchPosition(now: number): ReplicaFetchPosition | null;
  /**
   * The leader's answer to `sent`, with its records (whole batches as the leader sent them; a
   * trailing partial batch already cut off) or null when none. Settles once the records are
   * appended (and durable under flush always) or refused; the fetcher asks for this partition
   * again only after it settles. The records are a view of the answer's frame, which the fetcher
   * reuses for a later answer if every partition settles true: true says nothing holds them any
   * more (none were kept, or what kept them is done: the log wrote them); false, that something
   * may still (a failed commit), and the frame is then left to the collector.
   */
  onFetchAnswer(sent: ReplicaFetchPosition, answer: ReplicaFetchAnswer, records: Buffer | null, now: number): Promise<boolean>;
}

export interface LeaderEndpoint {
  readonly id: number;
  readonly host: string;
  readonly port: number;
}

export interface ReplicaFetcherSettings {
  /** This broker's id; -1 fetches as a consumer (reads only up to the high watermark). */
  readonly replicaId: number;
  /** e.g. `sluice-replica-<id>-shard-<n>`. */
  readonly clientId: string;
  /** Kafka's replica.fetch.wait.max.ms (500). */
  readonly maxWaitMs: number;
  readonly minBytes: number;
  /** Kafka's replica.fetch.response.max.bytes (10 MiB). */
  readonly maxBytes: number;
  /**
   * Kafka's replica.fetch.max.bytes (1 MiB). A response may pass maxBytes by one batch of at most
   * this size before the link refuses it, so it must be at least the largest batch a leader accepts.
   */
  readonly partitionMaxBytes: number;
  /** After a connection failure or an error answer (100). */
  readonly backoffMs: number;
  readonly requestTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** How to reach the leader's inter-broker listener: TLS, and who to authenticate as. */
  readonly security: PeerSecurity;
}

export interface ReplicaFetcherStats {
  readonly leaderId: number;
  readonly partitions: number;
  readonly requests: number;
  readonly bytes: number;
  readonly errors: number;
  readonly connected: boolean;
}

/**
 * Every Sluice broker serves the Fetch versions its FetchApi codec declares (the handler is built
 * on the same codec), so the fetcher asks with the highest one and skips ApiVersions. It is 17:
 * ReplicaState instead of a top-level replica id (v15+), topic ids (v13+), last fetched epoch and
 * diverging epochs (v12+).
 */
export const REPLICA_FETCH_VERSION = FetchApi.maxVersion;

/** Response header, topic and partition fields around the records: far below this per response. */
const FRAME_OVERHEAD_BYTES = 64 * 1024;
/** How often an idle fetcher asks its partitions again, so a backoff that expired inside a partition is noticed without wake(). */
export const IDLE_POLL_MS = 50;

/** One add() of a partition: a re-add after remove() is a new entry, so an old answer misses it. */
interface Entry {
  readonly p: FollowedPartition;
  settling: boolean;
}

interface Sent {
  readonly entry: Entry;
  readonly position: ReplicaFetchPosition;
}

const keyOf = (topicId: string, partition: number): string => `${topicId}:${partition}`;

function divergingOf(d: FetchResponseEpochEndOffset): DivergingEpoch | null {
  return d.epoch < 0 && d.endOffset < 0 ? null : { epoch: d.epoch, endOffset: d.endOffset };
}

/** The whole batches of a records field, or null when it holds none. */
function wholeBatches(records: FetchResponse['responses'][number]['partitions'][number]['records']): Buffer | null {
  const bytes = decodedRecords(records);
  const length = wholeBatchesLength(bytes);
  return length === 0 ? null : bytes.subarray(0, length);
}

/** One leader's fetch loop for the followed partitions of this shard. */
/** What a shard's replica fetchers have moved since it started: socket bytes and record bytes received. */
export interface FetcherTraffic {
  readonly link: LinkBytes;
  records: number;
}

export class ReplicaFetcher {
  private readonly entries = new Map<string, Entry>();
  private readonly link: KafkaLink;
  private readonly done: Promise<void>;
  private closed = false;
  /**
   * Ends the wait for the answers being applied (close() calls it); null while none is awaited.
   * Not a promise raced against each delivery: every Promise.race adds a reaction to the promise
   * it races, and one that settled only on close kept ~385 bytes per fetch until then.
   */
  private abandonDelivery: (() => void) | null = null;
  /** Resolves the loop's current wait early; null while it is not waiting. */
  private interrupt: (() => void) | null = null;
  /** Whether the current wait ends on wake() (an idle wait) or only on close/setLeader (a backoff). */
  private waitWakeable = false;
  private settlingBytes = 0;
  private requests = 0;
  private bytes = 0;
  private errors = 0;
  private loggedOversize = false;
  private loggedAuthentication = false;

  constructor(
    private leader: LeaderEndpoint,
    private readonly settings: ReplicaFetcherSettings,
    private readonly brokerEpoch: () => number,
    private readonly clock: () => number,
    private readonly log?: Pick<Logger, 'warn'>,
    /** Shared by the shard's fetchers; unthrottled unless given. */
    private readonly throttle: ThrottleQuota = new ThrottleQuota(),
    /** The shard's byte totals, shared by its fetchers. */
    private readonly traffic: FetcherTraffic = { link: { in: 0, out: 0 }, records: 0 },
  ) {
    this.link = new KafkaLink(settings.clientId, settings.maxBytes + settings.partitionMaxBytes + FRAME_OVERHEAD_BYTES, traffic.link, settings.security);
    this.done = this.run();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Starts fetching `p` (a no-op while it is followed). */
  add(p: FollowedPartition): void {
    const key = keyOf(p.topicId, p.partition);
    if (this.entries.get(key)?.p === p) return;
    this.entries.set(key, { p, settling: false });
    this.wake();
  }

  /** Stops fetching `p`; an answer in flight for it is dropped. */
  remove(p: FollowedPartition): void {
    const key = keyOf(p.topicId, p.partition);
    if (this.entries.get(key)?.p === p) this.entries.delete(key);
  }

  /** A partition's fetchPosition may have become non-null: asks soon rather than at the next poll. */
  wake(): void {
    if (this.waitWakeable) this.interrupt?.();
  }

  /** The leader broker's endpoint changed: the next request goes over a new connection. */
  setLeader(leader: LeaderEndpoint): void {
    if (leader.host === this.leader.host && leader.port === this.leader.port && leader.id === this.leader.id) return;
    this.leader = leader;
    this.link.close();
    this.interrupt?.();
  }

  /** Closes the connection and ends the loop; no answer reaches a partition afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    this.abandonDelivery?.();
    this.link.close();
    this.interrupt?.();
    await this.done;
  }

  stats(): ReplicaFetcherStats {
    return {
      leaderId: this.leader.id,
      partitions: this.entries.size,
      requests: this.requests,
      bytes: this.bytes,
      errors: this.errors,
      connected: this.link.connected,
    };
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const budget = this.settings.maxBytes - this.settlingBytes;
      const sent = budget > 0 ? this.positions() : new Map<string, Sent>();
      if (sent.size === 0) {
        // With nothing followed only add() can bring work; otherwise a partition's own backoff may expire.
        await this.wait(this.entries.size === 0 ? null : IDLE_POLL_MS, true);
        continue;
      }
      try {
        await this.link.connect(this.leader.host, this.leader.port, this.settings.connectTimeoutMs);
        if (this.closed) break;
        this.requests++;
        const { body: res, release } = await this.link.request(FetchApi, REPLICA_FETCH_VERSION, this.request(sent, budget), this.settings.requestTimeoutMs);
        if (this.closed) break;
        if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode as ErrorCode, `leader ${this.leader.id} refused the fetch`);
        // Authenticated and answered: a later refusal is a new episode, logged again.
        this.loggedAuthentication = false;
        // As Kafka's fetcher processes a whole answer before it fetches again: a fetch sent while
        // one partition still appends would carry only the others, and with none of them busy it
        // waits out maxWaitMs at the leader while the appended offsets it should report wait too
        // (acks=all then takes two maxWaits per produce).
        if (await this.deliver(sent, res)) release();
      } catch (err) {
        if (this.closed) break;
        this.failed(err);
        await this.wait(this.settings.backoffMs, false);
      }
    }
  }

  /** The position of every followed partition with something to ask and no answer settling. */
  private positions(): Map<string, Sent> {
    const now = this.clock();
    const sent = new Map<string, Sent>();
    const throttled = this.throttle.isExceeded(now);
    for (const [key, entry] of this.entries) {
      if (entry.settling || (throttled && entry.p.throttled)) continue;
      const position = entry.p.fetchPosition(now);
      if (position !== null) sent.set(key, { entry, position });
    }
    return sent;
  }

  private request(sent: ReadonlyMap<string, Sent>, maxBytes: number): FetchRequest {
    const topics = new Map<string, FetchRequestTopic>();
    for (const { entry, position } of sent.values()) {
      let topic = topics.get(entry.p.topicId);
      if (topic === undefined) {
        topic = { topic: '', topicId: entry.p.topicId, partitions: [] };
        topics.set(entry.p.topicId, topic);
      }
      topic.partitions.push({
        partition: entry.p.partition,
        currentLeaderEpoch: position.currentLeaderEpoch,
        fetchOffset: position.fetchOffset,
        lastFetchedEpoch: position.lastFetchedEpoch,
        logStartOffset: position.logStartOffset,
        partitionMaxBytes: this.settings.partitionMaxBytes,
        replicaDirectoryId: ZERO_UUID,
      });
    }
    return {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: this.settings.replicaId, replicaEpoch: this.brokerEpoch() },
      maxWaitMs: this.settings.maxWaitMs,
      minBytes: this.settings.minBytes,
      maxBytes,
      isolationLevel: 0,
      // Sessionless: Sluice brokers keep no fetch sessions.
      sessionId: 0,
      sessionEpoch: -1,
      topics: [...topics.values()],
      forgottenTopicsData: [],
      rackId: '',
    };
  }

  /**
   * Hands each answered partition its answer, if it is still followed by the same add(); settles
   * once all are applied (or the fetcher closed): true when every partition is done with its
   * records, so the answer's frame may be reused.
   */
  private deliver(sent: ReadonlyMap<string, Sent>, res: FetchResponse): Promise<boolean> {
    const now = this.clock();
    const applying: Promise<void>[] = [];
    let reusable = true;
    for (const topic of res.responses) {
      for (const part of topic.partitions) {
        const key = keyOf(topic.topicId, part.partitionIndex);
        const asked = sent.get(key);
        if (asked === undefined || this.entries.get(key) !== asked.entry) continue;
        const records = wholeBatches(part.records);
        const answer: ReplicaFetchAnswer = {
          errorCode: part.errorCode as ErrorCode,
          highWatermark: part.highWatermark,
          logStartOffset: part.logStartOffset,
          divergingEpoch: divergingOf(part.divergingEpoch),
        };
        const held = records?.length ?? 0;
        if (asked.entry.p.throttled) this.throttle.record(held, now);
        this.bytes += held;
        this.traffic.records += held;
        this.settlingBytes += held;
        asked.entry.settling = true;
        const settled = (): void => {
          asked.entry.settling = false;
          this.settlingBytes -= held;
          this.wake();
        };
        let applied: Promise<boolean>;
        try {
          applied = asked.entry.p.onFetchAnswer(asked.position, answer, records, now);
        } catch (err) {
          applied = Promise.reject(err);
        }
        applying.push(applied.then((done) => {
          if (!done) reusable = false;
          settled();
        }, () => {
          // A partition that fails its own answer has already dealt with it; the fetcher only counts it.
          this.errors++;
          reusable = false;
          settled();
        }));
      }
    }
    const all = Promise.all(applying);
    return new Promise<boolean>((resolve) => {
      this.abandonDelivery = () => resolve(false);
      void all.then(() => resolve(reusable));
    }).finally(() => {
      this.abandonDelivery = null;
    });
  }

  private failed(err: unknown): void {
    this.errors++;
    if (err instanceof PeerAuthenticationError && !this.loggedAuthentication) {
      // Retried after every backoff: one line per episode says it, errors counts the rest.
      this.loggedAuthentication = true;
      this.log?.warn({ leader: this.leader.id, err: err.message }, 'replica fetcher cannot authenticate to the leader: its followers stay out of the ISR (check inter-broker-sasl-username, its password and the ssl-* files)');
    }
    if (err instanceof KafkaError && err.code === ErrorCode.CORRUPT_MESSAGE && !this.loggedOversize) {
      this.loggedOversize = true;
      this.log?.warn({ leader: this.leader.id, err }, 'replica fetch answer refused; later ones are only counted');
    }
  }

  /** Waits `ms` (null: until interrupted); close() and setLeader() end any wait, wake() only a wakeable one. */
  private wait(ms: number | null, wakeable: boolean): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const done = (): void => {
        if (timer !== null) clearTimeout(timer);
        this.interrupt = null;
        this.waitWakeable = false;
        resolve();
      };
      if (ms !== null) timer = setTimeout(done, ms);
      this.interrupt = done;
      this.waitWakeable = wakeable;
    });
  }
}

/** The shard's replica fetchers by leader broker id: one is made on first use and closed when its last partition leaves. */
export class ReplicaFetchers {
  private readonly fetchers = new Map<number, ReplicaFetcher>();
  private readonly leaderOf = new Map<FollowedPartition, number>();
  private readonly closing = new Set<Promise<void>>();
  private readonly throttle = new ThrottleQuota();
  readonly traffic: FetcherTraffic = { link: { in: 0, out: 0 }, records: 0 };

  constructor(
    private readonly settings: ReplicaFetcherSettings,
    private readonly brokerEpoch: () => number,
    private readonly clock: () => number,
    private readonly log?: Pick<Logger, 'warn'>,
  ) {}

  /** Fetches `p` from `leader`, moving it off the fetcher of a previous leader. */
  follow(p: FollowedPartition, leader: LeaderEndpoint): void {
    const previous = this.leaderOf.get(p);
    if (previous !== undefined && previous !== leader.id) this.unfollow(p);
    let fetcher = this.fetchers.get(leader.id);
    if (fetcher === undefined) {
      fetcher = new ReplicaFetcher(leader, this.settings, this.brokerEpoch, this.clock, this.log, this.throttle, this.traffic);
      this.fetchers.set(leader.id, fetcher);
    } else {
      fetcher.setLeader(leader);
    }
    this.leaderOf.set(p, leader.id);
    fetcher.add(p);
  }

  unfollow(p: FollowedPartition): void {
    const leaderId = this.leaderOf.get(p);
    if (leaderId === undefined) return;
    this.leaderOf.delete(p);
    const fetcher = this.fetchers.get(leaderId);
    if (fetcher === undefined) return;
    fetcher.remove(p);
    if (fetcher.size > 0) return;
    this.fetchers.delete(leaderId);
    const closed = fetcher.close().finally(() => this.closing.delete(closed));
    this.closing.add(closed);
  }

  /** The shard's share of the follower replication throttle, bytes/s (Infinity: unthrottled). */
  setThrottleRate(bytesPerSecond: number): void {
    this.throttle.setRate(bytesPerSecond);
  }

  wake(leaderId: number): void {
    this.fetchers.get(leaderId)?.wake();
  }

  async close(): Promise<void> {
    const all = [...this.fetchers.values()].map((f) => f.close());
    this.fetchers.clear();
    this.leaderOf.clear();
    await Promise.all([...all, ...this.closing]);
  }

  stats(): ReplicaFetcherStats[] {
    return [...this.fetchers.values()].map((f) => f.stats());
  }
}
