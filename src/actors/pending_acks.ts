// The acknowledgement seam of one partition actor (shard worker thread): produce requests whose
// records are appended but whose acknowledgement condition does not hold yet, in append order.
// An entry completes once the actor's acknowledged offset covers its last record
// (ackOffset >= lastOffset + 1). Today that offset is the log's durable end after a group commit;
// replication makes it min(durable end, high watermark of the in-sync replicas) without changing
// this queue. An entry fails with a Kafka code when the commit holding it failed, when its
// deadline passed, or when the partition closes.
// Invariants: every entry is settled exactly once; completions happen in append order; an entry
// never completes before the acknowledged offset covers it. Bounded by `capacity`.
import { ErrorCode } from '../protocol/errors.js';

interface Entry<T> {
  readonly seq: number;
  readonly endOffset: number;
  readonly deadline: number;
  readonly ticket: T;
  settled: boolean;
}

export class PendingAcks<T> {
  private entries: Entry<T>[] = [];
  private head = 0;
  private live = 0;
  private nextSeq = 1;

  /**
   * `settle` receives each ticket once, with 0 when its condition held or the Kafka error code it
   * failed with.
   */
  constructor(
    private readonly capacity: number,
    private readonly settle: (ticket: T, errorCode: number) => void,
  ) {}

  /** Entries still waiting. */
  get size(): number {
    return this.live;
  }

  get full(): boolean {
    return this.live >= this.capacity;
  }

  /** Sequence number of the newest entry (0 before any): commit failures fail up to it. */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** Queues a ticket waiting for `endOffset` (its last offset + 1); false when the queue is full. */
  add(endOffset: number, deadline: number, ticket: T): boolean {
    if (this.full) return false;
    this.entries.push({ seq: this.nextSeq++, endOffset, deadline, ticket, settled: false });
    this.live++;
    return true;
  }

  /** Completes, in order, every leading entry the acknowledged offset covers. */
  advance(ackOffset: number): void {
    while (this.head < this.entries.length) {
      const e = this.entries[this.head]!;
      if (!e.settled) {
        if (e.endOffset > ackOffset) break;
        this.finish(e, ErrorCode.NONE);
      }
      this.head++;
    }
    this.compact();
  }

  /** Fails every waiting entry added up to and including sequence `seq` (a failed commit held them). */
  failThrough(seq: number, errorCode: number): void {
    for (let i = this.head; i < this.entries.length && this.entries[i]!.seq <= seq; i++) {
      const e = this.entries[i]!;
      if (!e.settled) this.finish(e, errorCode);
    }
    this.skipSettled();
  }

  /** Fails with REQUEST_TIMED_OUT every waiting entry whose deadline is at or before `now`. */
  expire(now: number): void {
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (!e.settled && e.deadline <= now) this.finish(e, ErrorCode.REQUEST_TIMED_OUT);
    }
    this.skipSettled();
  }

  /** The earliest deadline of a waiting entry (Infinity when none waits). */
  nextDeadline(): number {
    let next = Infinity;
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (!e.settled && e.deadline < next) next = e.deadline;
    }
    return next;
  }

  private finish(e: Entry<T>, errorCode: number): void {
    e.settled = true;
    this.live--;
    this.settle(e.ticket, errorCode);
  }

  private skipSettled(): void {
    while (this.head < this.entries.length && this.entries[this.head]!.settled) this.head++;
    this.compact();
  }

  /** Drops the settled prefix once it is at least half the array, so each entry is copied O(1) times. */
  private compact(): void {
    if (this.head === this.entries.length) {
      this.entries = [];
      this.head = 0;
    } else if (this.head > 64 && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}
