// A `ShardPort` into a `Shard` on the sender's own thread (no worker, no ring): it opens a lane on
// the shard, hands each request straight to the shard's data plane methods, and passes the lane's
// answers to a `ShardResultSink` as shard `index`'s. For issue 16, where a shard thread serves the
// connections it adopts with a PartitionRouter of its own (net/placed_serving.ts).
// Answers are delivered in a microtask, in the order the shard sent them, never during a send:
// the router records a request only after it has handed out every part of it (a shard answers a
// fetch with data, a ListOffsets or an unknown partition at once), and a ring port's answers are
// always later too. The lane's answers wait at most until that microtask, so its bound is the
// router's own (requests in flight). The port is blocked while the shard's produces wait for room
// under its bound on uncommitted bytes (Shard.producesWait): the connections that fed it stop
// reading after the request they are serving, as they do for a ring port's full ring.
import type { FrameKeeper } from '../common/frame_pool.js';
import type { Outgoing } from './outbox.js';
import type { FetchAsk, ListOffsetsAsk, ProduceAsk } from './ring_messages.js';
import type { Shard } from './shard.js';
import type { ShardPort, ShardResultSink } from './shard_port.js';

export class LocalShardPort implements ShardPort {
  private readonly lane: number;
  private answers: Outgoing[] = [];
  private delivering = false;

  constructor(
    private readonly shard: Shard,
    readonly index: number,
    private readonly sink: ShardResultSink,
  ) {
    this.lane = shard.openLane({ send: (msg) => this.answer(msg) });
  }

  get blocked(): boolean {
    return this.shard.producesWait;
  }

  whenUnblocked(): Promise<void> {
    return this.shard.whenProducesMay();
  }

  produce(ask: ProduceAsk, records: Buffer, keeper: FrameKeeper | null): boolean {
    if (keeper === null) this.shard.produce(this.lane, ask, records, 0, records.length);
    else this.shard.produceLent(this.lane, ask, records, keeper.hold());
    return true;
  }

  fetch(ask: FetchAsk): boolean {
    this.shard.fetch(this.lane, ask);
    return true;
  }

  listOffsets(ask: ListOffsetsAsk): boolean {
    this.shard.listOffsets(this.lane, ask);
    return true;
  }

  groupCall(reqId: number, handle: number, payload: Buffer): boolean {
    this.shard.groupCall(this.lane, reqId, handle, payload);
    return true;
  }

  release(reqId: number): void {
    this.shard.releaseFetch(this.lane, reqId);
  }

  /** The shard's answer on this port's lane: queued for the next delivery. */
  private answer(msg: Outgoing): void {
    this.answers.push(msg);
    if (!this.delivering) {
      this.delivering = true;
      queueMicrotask(this.deliver);
    }
  }

  private readonly deliver = (): void => {
    // Answers the sink's calls cause (a release answered at once) join the next round.
    const batch = this.answers;
    this.answers = [];
    this.delivering = false;
    const sink = this.sink;
    for (const msg of batch) {
      switch (msg.kind) {
        case 'produce':
          sink.onProduceResult(this.index, msg.result);
          break;
        case 'fetch':
          sink.onFetchResult(this.index, msg.reqId, msg.parts, msg.waited);
          break;
        case 'fetchProgress':
          sink.onFetchProgress(this.index, msg.reqId, msg.bytes);
          break;
        case 'group':
          sink.onGroupResult(this.index, msg.reqId, msg.payload);
          break;
        case 'listOffsets':
          sink.onListOffsetsResult(this.index, msg.reqId, msg.parts);
          break;
      }
    }
  };
}
