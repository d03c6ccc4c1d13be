// The producer's send loop: drains ready batches from the RecordAccumulator per leader, sends one
// Produce request per leader per drain (pipelined, at most `maxInFlight` per broker), and settles
// each batch from its partition's answer. Runs on the producer's thread; one loop per producer.
// Invariants:
// - A batch is only drained for a broker whose connection is open right now, so requests are
//   queued on the connection synchronously, in drain order: sequence numbers of one partition go
//   out in order (the accumulator keeps retried batches behind earlier ones).
// - Every drained batch ends in exactly one of accumulator.complete / retry / fail (or was
//   expired meanwhile, which the accumulator reports as false and we ignore).
// - Idempotence: retries keep their sequence numbers, so the broker drops resends of batches it
//   already holds (answering NONE or DUPLICATE_SEQUENCE_NUMBER, both successes). Producer id and
//   epoch change only while nothing is in flight: after a sequenced batch was lost (failed or
//   expired: the accumulator's needsProducerIdReset) or after UNKNOWN_PRODUCER_ID, the epoch is
//   bumped locally (as Java's idempotent producer does; a new id is fetched when the epoch would
//   overflow) and queued batches get fresh sequences from 0.
// - OUT_OF_ORDER_SEQUENCE_NUMBER for a batch whose predecessor is not yet acknowledged is a
//   consequence of that predecessor failing or being retried: the batch is retried. For the
//   batch right after the last acknowledged one it means the broker lost our sequence: the
//   batch fails (Java does the same) and the epoch bump above follows.
// - UNKNOWN_PRODUCER_ID (the broker no longer has state for our id, e.g. after retention
//   removed it): the batch is retried under a bumped epoch. If the broker had in fact stored it,
//   that resend duplicates it; Java accepts the same risk.
// - Leader moves (KIP-951): a NOT_LEADER_OR_FOLLOWER whose hint names a newer leader (or after
//   which the cache already names another one) sends the batch back to the accumulator with no
//   backoff and no Metadata request; it drains to the new leader once its partition has nothing
//   left in flight to the old one (the accumulator's one-broker-at-a-time rule), so the new leader
//   sees the partition's sequences in order. Without a usable hint the topic is re-read, as before.
// - Bounded state: links (one per broker in the metadata), topics awaiting metadata (at most the
//   accumulator's partitions), acknowledged sequences (one per partition written).

import { ProduceApi } from '../../protocol/apis/produce.js';
import type { ProduceResponsePartition, ProduceRequest, ProduceRequestTopic, ProduceResponse } from '../../protocol/apis/produce.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { BackoffOptions } from '../../protocol/backoff.js';
import { brokerError } from '../broker_errors.js';
import { isStaleMetadataError } from '../cluster.js';
import type { Cluster } from '../cluster.js';
import type { KafkaConnection } from '../connection.js';
import { hintFrom } from '../leader_hints.js';
import type { NodeEndpoint } from '../../protocol/apis/leader_hints.js';
import { encodeRecordBatch } from '../../protocol/records.js';
import type { CompressionCodec } from '../../protocol/records.js';
import type { ProducerBatch, RecordAccumulator } from './accumulator.js';
import { Outcome, asKafkaError, partitionOutcome, requestFailureIsRetriable } from './produce_errors.js';
import { initProducerId } from './producer_id.js';
import { WakeLatch } from './wake_latch.js';

export interface SenderConfig {
  /** 0, 1 or -1. */
  readonly acks: number;
  readonly compression: CompressionCodec;
  readonly idempotent: boolean;
  readonly requestTimeoutMs: number;
  readonly retryBackoffMs: number;
  /** Produce requests awaiting an answer per broker. */
  readonly maxInFlight: number;
  readonly backoff: BackoffOptions;
  /** Called for each drained batch (the partitioner moves keyless records on). */
  readonly onDrained: (batch: ProducerBatch) => void;
}

interface Link {
  conn: KafkaConnection | null;
  connecting: boolean;
  /** The last attempt to connect failed: the broker may be gone, and with it its leaderships. */
  refused: boolean;
  inflight: number;
}

/** Magic-2 record batches need Produce v3+. */
const MIN_PRODUCE_VERSION = 3;
const INT16_MAX = 0x7fff;
const INT32_MAX = 0x7fffffff;
/** Wake-up interval while anything is buffered, so expiry runs without other events. */
const EXPIRY_CHECK_MS = 100;

export class Sender {
  private readonly links = new Map<number, Link>();
  private readonly needMetadata = new Set<string>();
  /** Next sequence the broker expects per topic and partition (idempotence only). */
  private readonly acked = new Map<string, Map<number, number>>();
  private readonly waker = new WakeLatch();
  private metadataBusy = false;
  private metadataRetryAt = 0;
  private requestsInFlight = 0;
  private epochResetWanted = false;
  private producerId = -1;
  private producerEpoch = -1;
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly cluster: Cluster, private readonly acc: RecordAccumulator, private readonly cfg: SenderConfig) {}

  /** Fetches the producer id when idempotent (before anything drains) and starts the loop. */
  async start(): Promise<void> {
    if (this.cfg.idempotent) {
      const id = await initProducerId(this.cluster, this.cfg.requestTimeoutMs, this.cfg.backoff);
      this.setProducerId(id.producerId, id.producerEpoch);
    }
    this.loop ??= this.run();
  }

  /** Something may be ready: run the loop soon. */
  wake(): void {
    this.waker.wake();
  }

  /** Stops the loop (after the caller flushed); requests still in flight settle on their own. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waker.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.step();
      } catch (err) {
        // A bug, not an operating error: fail every record rather than hang their senders.
        this.acc.abort(asKafkaError(err));
        return;
      }
    }
  }

  private async step(): Promise<void> {
    const now = Date.now();
    this.acc.expire(now);
    let sent = 0;
    if (this.cfg.idempotent && (this.acc.needsProducerIdReset || this.epochResetWanted)) {
      if (this.requestsInFlight === 0) await this.bumpEpoch();
    } else {
      sent = this.sendReady(now);
    }
    this.refreshMetadata(now);
    let delay = this.acc.timeUntilReady(now, this.leaderFor);
    if (this.needMetadata.size > 0 && !this.metadataBusy) delay = Math.min(delay, Math.max(0, this.metadataRetryAt - now));
    if (this.acc.bufferedBytes > 0) delay = Math.min(delay, EXPIRY_CHECK_MS);
    // Guards against spinning if "ready" and "drainable" ever disagree.
    await this.waker.sleep(sent === 0 ? Math.max(delay, 1) : delay);
  }

  /** Leader of a partition if a request may go to it now; -1 otherwise (and says why). */
  private readonly leaderFor = (topic: string, partition: number): number => {
    const node = this.cluster.leaderOf(topic, partition);
    if (node < 0) {
      this.needMetadata.add(topic);
      return -1;
    }
    let link = this.links.get(node);
    if (link === undefined) {
      link = { conn: null, connecting: false, refused: false, inflight: 0 };
      this.links.set(node, link);
    }
    if (link.conn === null || !link.conn.isOpen) {
      // A leader we cannot reach may have been replaced (killed, fenced): look again, as Java's
      // client does on a disconnect. Without this, a producer idle while its leader died would
      // redial the dead broker until its records expire, since no answer ever says NOT_LEADER.
      if (link.refused) this.needMetadata.add(topic);
      this.connect(node, link);
      return -1;
    }
    return link.inflight < this.cfg.maxInFlight ? node : -1;
  };

  private connect(node: number, link: Link): void {
    if (link.connecting) return;
    link.connecting = true;
    link.conn = null;
    this.cluster.connection(node).then((conn) => {
      link.conn = conn;
      link.connecting = false;
      link.refused = false;
      this.waker.wake();
    }, () => {
      link.refused = true;
      // The cluster already backs off between attempts; this keeps a refused node from spinning the loop.
      setTimeout(() => {
        link.connecting = false;
        this.waker.wake();
      }, this.cfg.retryBackoffMs);
    });
  }

  private sendReady(now: number): number {
    let sent = 0;
    for (const [node, batches] of this.acc.drain(now, this.leaderFor)) {
      const link = this.links.get(node) as Link;
      for (const b of batches) this.cfg.onDrained(b);
      this.produce(node, link, link.conn as KafkaConnection, batches);
      sent++;
    }
    return sent;
  }

  private produce(node: number, link: Link, conn: KafkaConnection, batches: ProducerBatch[]): void {
    let request: ProduceRequest;
    let version: number;
    try {
      version = conn.versionFor(ProduceApi);
      if (version < MIN_PRODUCE_VERSION) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `broker's Produce v${version} predates record batches`);
      request = this.request(batches);
    } catch (err) {
      for (const b of batches) this.acc.fail(b, asKafkaError(err));
      return;
    }
    link.inflight++;
    this.requestsInFlight++;
    const answer = this.cfg.acks === 0
      ? conn.request(ProduceApi, request, version, { noResponse: true }).then(() => this.writtenUnacknowledged(batches))
      : conn.request(ProduceApi, request, version).then((res) => this.onResponse(node, batches, res));
    answer.catch((err: unknown) => this.onRequestFailed(batches, err)).finally(() => {
      link.inflight--;
      this.requestsInFlight--;
      this.waker.wake();
    });
  }

  private request(batches: readonly ProducerBatch[]): ProduceRequest {
    const topics = new Map<string, ProduceRequestTopic>();
    for (const b of batches) {
      const records = encodeRecordBatch(b.records, {
        compression: this.cfg.compression, producerId: b.producerId, producerEpoch: b.producerEpoch, baseSequence: b.baseSequence,
      });
      let t = topics.get(b.topic);
      if (t === undefined) {
        t = { name: b.topic, partitionData: [] };
        topics.set(b.topic, t);
      }
      t.partitionData.push({ index: b.partition, records });
    }
    return { transactionalId: null, acks: this.cfg.acks, timeoutMs: this.cfg.requestTimeoutMs, topicData: [...topics.values()] };
  }

  private writtenUnacknowledged(batches: readonly ProducerBatch[]): void {
    for (const b of batches) this.acc.complete(b, -1);
  }

  private onResponse(node: number, batches: readonly ProducerBatch[], res: ProduceResponse): void {
    const now = Date.now();
    for (const b of batches) {
      const p = res.responses.find((t) => t.name === b.topic)?.partitionResponses.find((x) => x.index === b.partition);
      if (p === undefined) {
        this.acc.fail(b, new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Produce answer lacks ${b.topic}-${b.partition}`));
        continue;
      }
      this.settle(b, p, node, res.nodeEndpoints, now);
    }
  }

  /** Settles `b` from its partition's answer by broker `node` (whose nodeEndpoints resolve leader hints). */
  private settle(b: ProducerBatch, p: ProduceResponsePartition, node: number, endpoints: readonly NodeEndpoint[], now: number): void {
    const { errorCode: code, baseOffset, errorMessage: message } = p;
    switch (partitionOutcome(code)) {
      case Outcome.ok:
        if (this.acc.complete(b, baseOffset) && this.cfg.idempotent) this.acknowledge(b);
        return;
      case Outcome.retry:
        // KIP-951: the refusing broker named a newer leader; its batches go there without a Metadata round trip.
        if (code === ErrorCode.NOT_LEADER_OR_FOLLOWER && this.cluster.followLeaderHint(hintFrom(b.topic, b.partition, p.currentLeader, endpoints), node)) {
          this.acc.retry(b, now, 0);
          return;
        }
        if (isStaleMetadataError(code)) this.cluster.markStale(b.topic);
        this.needMetadata.add(b.topic);
        this.acc.retry(b, now);
        return;
      case Outcome.outOfOrder:
        if (b.baseSequence !== this.expectedSequence(b)) this.acc.retry(b, now);
        else this.acc.fail(b, batchError(code, b, message));
        return;
      case Outcome.unknownProducer:
        this.epochResetWanted = true;
        this.acc.retry(b, now);
        return;
      default:
        this.acc.fail(b, batchError(code, b, message));
    }
  }

  private onRequestFailed(batches: readonly ProducerBatch[], err: unknown): void {
    const now = Date.now();
    const retriable = requestFailureIsRetriable(err);
    for (const b of batches) {
      if (retriable) {
        this.needMetadata.add(b.topic);
        this.acc.retry(b, now);
      } else {
        this.acc.fail(b, asKafkaError(err));
      }
    }
  }

  private acknowledge(b: ProducerBatch): void {
    let partitions = this.acked.get(b.topic);
    if (partitions === undefined) {
      partitions = new Map();
      this.acked.set(b.topic, partitions);
    }
    partitions.set(b.partition, (b.baseSequence + b.records.length) % (INT32_MAX + 1));
  }

  private expectedSequence(b: ProducerBatch): number {
    return this.acked.get(b.topic)?.get(b.partition) ?? 0;
  }

  private async bumpEpoch(): Promise<void> {
    if (this.producerEpoch < INT16_MAX) {
      this.setProducerId(this.producerId, this.producerEpoch + 1);
      return;
    }
    try {
      const id = await initProducerId(this.cluster, this.cfg.requestTimeoutMs, this.cfg.backoff);
      this.setProducerId(id.producerId, id.producerEpoch);
    } catch {
      // Retried on the next step; the batches waiting meanwhile are bounded by their delivery timeout.
    }
  }

  private setProducerId(producerId: number, producerEpoch: number): void {
    this.acc.setProducerId(producerId, producerEpoch);
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.epochResetWanted = false;
    this.acked.clear();
  }

  /** Re-reads metadata for topics whose partitions lack a leader or answered with a stale-leader error. */
  private refreshMetadata(now: number): void {
    if (this.needMetadata.size === 0 || this.metadataBusy || now < this.metadataRetryAt) return;
    const topics = [...this.needMetadata];
    this.needMetadata.clear();
    this.metadataBusy = true;
    const lookups = topics.map((t) => (this.cluster.cachedTopic(t) === undefined ? this.cluster.topic(t) : this.cluster.refresh()));
    void Promise.allSettled(lookups).then(() => {
      this.metadataBusy = false;
      this.metadataRetryAt = Date.now() + this.cfg.retryBackoffMs;
      this.waker.wake();
    });
  }
}

function batchError(code: number, b: ProducerBatch, message: string | null): KafkaError {
  return brokerError(code, `Produce ${b.topic}-${b.partition}`, message);
}
