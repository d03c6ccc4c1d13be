// Per-record delivery promises for one producer batch: each record appended to the batch gets a
// promise that resolves with where it landed ({topic, partition, offset} with offset = the
// batch's base offset + the record's index) or rejects with the KafkaError its batch failed with.
// Runs on the producer's thread. Owns only the resolvers of its batch's records.
// Invariants: a batch settles exactly once and every record's promise follows it (later
// resolve/reject calls are ignored, so a late answer for an expired batch is harmless); a batch
// past its deadline (creation + delivery timeout, covering linger, retries and the wait for an
// answer, as Kafka's delivery.timeout.ms does) fails all of its records with REQUEST_TIMED_OUT.
//
// Use in the send loop: the accumulator creates one BatchDelivery per batch and hands the
// caller `track()`'s promise on append; the loop calls accumulator.complete / fail / expire,
// which settle the batch's delivery.

import { ErrorCode, KafkaError } from '../../protocol/errors.js';

/** Where a record was written. `offset` is -1 when acks=0 (nobody told us). */
export interface RecordMetadata {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

type Resolve = (meta: RecordMetadata) => void;
type Reject = (err: KafkaError) => void;

export class BatchDelivery {
  readonly topic: string;
  readonly partition: number;
  readonly createdAt: number;
  /** Time after which the batch fails as timed out. */
  readonly deadline: number;
  private resolvers: Resolve[] = [];
  private rejecters: Reject[] = [];
  private tracked = 0;
  private isSettled = false;

  constructor(topic: string, partition: number, createdAt: number, deliveryTimeoutMs: number) {
    this.topic = topic;
    this.partition = partition;
    this.createdAt = createdAt;
    this.deadline = createdAt + deliveryTimeoutMs;
  }

  /** Adds the next record (in append order) and returns its delivery promise. */
  track(): Promise<RecordMetadata> {
    if (this.isSettled) throw new Error(`batch for ${this.topic}-${this.partition} is already settled`);
    return new Promise<RecordMetadata>((resolve, reject) => {
      this.resolvers.push(resolve);
      this.rejecters.push(reject);
      this.tracked++;
    });
  }

  /** Records tracked so far (stays put after settling). */
  get count(): number {
    return this.tracked;
  }

  get settled(): boolean {
    return this.isSettled;
  }

  isExpired(now: number): boolean {
    return now >= this.deadline;
  }

  /** The broker stored the batch at `baseOffset` (negative: offsets unknown, acks=0). */
  resolve(baseOffset: number): void {
    if (this.isSettled) return;
    const resolvers = this.settle();
    for (let i = 0; i < resolvers.length; i++) {
      (resolvers[i] as Resolve)({ topic: this.topic, partition: this.partition, offset: baseOffset < 0 ? -1 : baseOffset + i });
    }
  }

  reject(err: KafkaError): void {
    if (this.isSettled) return;
    const rejecters = this.rejecters;
    this.settle();
    for (const reject of rejecters) reject(err);
  }

  /** Fails every record as timed out; returns the error it used. */
  expire(now: number): KafkaError {
    const err = new KafkaError(
      ErrorCode.REQUEST_TIMED_OUT,
      `expiring ${this.count} record(s) for ${this.topic}-${this.partition}: ${now - this.createdAt} ms since batch creation`,
    );
    this.reject(err);
    return err;
  }

  /** Marks settled, drops the rejecters, and hands back the resolvers. */
  private settle(): Resolve[] {
    const resolvers = this.resolvers;
    this.isSettled = true;
    this.resolvers = [];
    this.rejecters = [];
    return resolvers;
  }
}
