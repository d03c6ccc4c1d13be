// The main thread's seam to one shard (types only): what PartitionRouter sends a shard
// (`ShardPort`) and what a shard's answers call back on the router (`ShardResultSink`).
// `RingShardPort` implements the port over a shard's SPSC ring pair (a worker thread);
// `LocalShardPort` delivers into a lane of a `Shard` on the sender's own thread, no ring (issue
// 16: shard threads serving the connections they adopt). The router depends on nothing else of a
// shard, so either can sit behind it.
import type { FrameKeeper } from '../common/frame_pool.js';
import type {
  FetchAsk,
  FetchPartitionResult,
  ListOffsetsAsk,
  ListOffsetsPartitionResult,
  ProduceAsk,
  ProduceResult,
} from './ring_messages.js';

/**
 * Sends work to shard i. Every answer arrives later, never during the send, through the
 * `ShardResultSink` the port was built with, keyed by the request id the ask carries. A send that
 * returns false was not delivered (the port's bound is hit): the caller fails that part itself.
 */
export interface ShardPort {
  /**
   * The shard takes no more for now: sends queue behind a full ring (a ring port), or the shard's
   * produces wait for room under its uncommitted-bytes bound (a same-thread port, whose sends still
   * go through). Either way the connections feeding it stop reading until `whenUnblocked()`.
   */
  readonly blocked: boolean;
  /** Resolves once the port is no longer blocked (at once if it is not). */
  whenUnblocked(): Promise<void>;
  /**
   * `records` is read during the call only, unless `keeper` lends its frame: a port on the shard's
   * own thread then stages the batch by reference and lets go once its commit settled.
   */
  produce(ask: ProduceAsk, records: Buffer, keeper: FrameKeeper | null): boolean;
  fetch(ask: FetchAsk): boolean;
  /** Every partition of one ListOffsets (or OffsetsForLeaderEpoch) request this shard owns. */
  listOffsets(ask: ListOffsetsAsk): boolean;
  /** A serialized GroupCall for the coordinator of offsets partition `handle`; `payload` is read during the call only. */
  groupCall(reqId: number, handle: number, payload: Buffer): boolean;
  /** Answers the parked fetch `reqId` now; never refused (a lost release would leave the fetch waiting out its deadline). */
  release(reqId: number): void;
}

/** Where a shard's answers go on the router's side; `shard` is the index of the port they came through. */
export interface ShardResultSink {
  onProduceResult(shard: number, r: ProduceResult): void;
  /** `waited`: the shard parked the fetch before answering. */
  onFetchResult(shard: number, reqId: number, parts: FetchPartitionResult[], waited: boolean): void;
  /** The shard's parked part of multi-shard fetch `reqId` holds `bytes` readable bytes. */
  onFetchProgress(shard: number, reqId: number, bytes: number): void;
  /** `payload` may be a view into ring memory, valid only during the call. */
  onGroupResult(shard: number, reqId: number, payload: Buffer): void;
  onListOffsetsResult(shard: number, reqId: number, parts: ListOffsetsPartitionResult[]): void;
}
