// PlacedServing on one thread, over a real Shard: which requests a shard serves for its placed
// connections and which it forwards to main. Forwarded: any request while main owes the
// connection an answer, every request while the snapshot is closed or older than the highest
// revision main's answers carried (the fence, which never goes down), a request naming any
// partition the snapshot lacks, a client's current leader epoch other than the snapshot's, a
// replica's OffsetForLeaderEpoch (v3+), a follower's Fetch (replica id, v15+ replica state) of a
// partition whose snapshot replica set lacks it or whose leader throttle lists it, a Fetch v13+
// topic id the snapshot does not know, and a frame that does not decode. Served: the rest,
// through the real handlers into the shard (a served produce is read back by served Fetch,
// ListOffsets and OffsetForLeaderEpoch, and by a follower's Fetch), counted in the traffic report
// a second later. A follower's Fetch parked here is answered as soon as a snapshot brings a
// leadership it replicates. A snapshot that no longer holds a partition closes the reader's
// descriptors of its files. With a peer shard over a small mesh: a partition of the peer is served
// through the mesh, but a Produce batch, or a Fetch, ListOffsets or OffsetForLeaderEpoch naming
// more of the peer's partitions, than the peer's ring takes is forwarded.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, describe, it, mock } from 'node:test';
import type { RingShardPort } from '../../../src/actors/ring_shard_port.js';
import { allocateShardMesh, joinShardMesh } from '../../../src/actors/shard_mesh.js';
import { NO_RESPONSE, type HandlerContext, type HandlerResult, type Wire } from '../../../src/net/handler.js';
import type { PlacementSnapshot, PlacedTraffic, SnapshotPartition } from '../../../src/net/placement_messages.js';
import { PlacedServing, ServedProduces } from '../../../src/net/placed_serving.js';
import { FetchApi, type FetchRequest } from '../../../src/protocol/apis/fetch.js';
import { ListOffsetsApi, type ListOffsetsRequest } from '../../../src/protocol/apis/list_offsets.js';
import { OffsetForLeaderEpochApi, type OffsetForLeaderEpochRequest } from '../../../src/protocol/apis/offset_for_leader_epoch.js';
import { ProduceApi, type ProduceRequest } from '../../../src/protocol/apis/produce.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { decodeRecords, encodeRecordBatch } from '../../../src/protocol/records.js';
import { Reader } from '../../../src/protocol/reader.js';
import { decodedRecords, type Api, type RecordsValue } from '../../../src/protocol/schema.js';
import { Writer } from '../../../src/protocol/writer.js';
import { answered, requestContext } from '../../helpers/handler_context.js';
import { HOSTED_TOPIC, HostedShard } from '../../helpers/hosted_shard.js';
import { openUnder } from '../../helpers/open_fds.js';
import { LATEST } from '../../helpers/read_back.js';
import { requestFrame } from '../../helpers/raw_socket.js';
import { SOLE_BROKER, TEST_BROKER_ID, TEST_TOPIC_ID } from '../../helpers/replica_roles.js';
import { waitFor } from '../log/log_fixture.js';
import { closedAfterEach } from '../../helpers/closed_after_each.js';

/** Partition 0 of the hosted topic is open on the shard and, unless a test says otherwise, in the snapshot; partition 1 is in neither. */
const HANDLE = 0;
const LEADER_EPOCH = 0;
const OTHER_TOPIC_ID = 'cd'.repeat(16);
const ONE_MB = 1 << 20;

/** A client that gave no current leader epoch. */
const NO_EPOCH = -1;
const CONSUMER = -1;

const TOPIC = { name: HOSTED_TOPIC, id: TEST_TOPIC_ID, partitions: 1, configs: {} };

function snapshotPartition(dir: string, { partition = 0, handle = HANDLE, shard = 0, replicas = [TEST_BROKER_ID], configs = {} }: {
  partition?: number; handle?: number; shard?: number; replicas?: number[]; configs?: Record<string, string>;
} = {}): SnapshotPartition {
  return {
    topic: { ...TOPIC, partitions: 2, configs }, handle, shard, dir,
    record: {
      topicId: TEST_TOPIC_ID, partition, replicas, isr: [TEST_BROKER_ID], removingReplicas: [], addingReplicas: [],
      leader: TEST_BROKER_ID, leaderEpoch: LEADER_EPOCH, partitionEpoch: LEADER_EPOCH,
    },
  };
}

function snapshot(revision: number, partitions: readonly SnapshotPartition[], open = true): PlacementSnapshot {
  return { revision, localId: TEST_BROKER_ID, open, partitions, limits: { maxProduceBatchBytes: ONE_MB, fetchMaxBytes: ONE_MB, messageMaxBytes: ONE_MB } };
}

function produceRequest(partitions: readonly number[], values: readonly string[] | readonly Buffer[]): ProduceRequest {
  const records = encodeRecordBatch(values.map((v) => ({ key: null, value: Buffer.from(v), timestamp: Date.now() })));
  return { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: HOSTED_TOPIC, partitionData: partitions.map((index) => ({ index, records })) }] };
}

interface FetchShape {
  readonly partition?: number;
  readonly currentLeaderEpoch?: number;
  readonly replicaId?: number;
  /** v15+: the replica id travels in the replica state. */
  readonly stateReplicaId?: number;
  readonly topicId?: string;
  /** Parks until a byte is there or max wait passes when given; never parks by default. */
  readonly maxWaitMs?: number;
}

/** A fetch from offset 0, by default one that never parks (min_bytes 0); of `partitions` when given, else of `partition`. */
function fetchRequest({ partition = 0, currentLeaderEpoch = NO_EPOCH, replicaId = CONSUMER, stateReplicaId = CONSUMER, topicId = TEST_TOPIC_ID, maxWaitMs }: FetchShape = {}, partitions = [partition]): FetchRequest {
  return {
    clusterId: null, replicaId, replicaState: { replicaId: stateReplicaId, replicaEpoch: -1 }, maxWaitMs: maxWaitMs ?? 0, minBytes: maxWaitMs === undefined ? 0 : 1, maxBytes: ONE_MB, isolationLevel: 0,
    sessionId: 0, sessionEpoch: -1, forgottenTopicsData: [], rackId: '',
    topics: [{ topic: HOSTED_TOPIC, topicId, partitions: partitions.map((p) => ({ partition: p, currentLeaderEpoch, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: ONE_MB, replicaDirectoryId: '0'.repeat(32) })) }],
  };
}

function listOffsetsRequest(partitions: readonly number[], currentLeaderEpoch = NO_EPOCH): ListOffsetsRequest {
  return { replicaId: CONSUMER, isolationLevel: 0, topics: [{ name: HOSTED_TOPIC, partitions: partitions.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch, timestamp: LATEST })) }] };
}

function epochRequest(partition: number, currentLeaderEpoch = NO_EPOCH, replicaId = CONSUMER, partitions = [partition]): OffsetForLeaderEpochRequest {
  return { replicaId, topics: [{ topic: HOSTED_TOPIC, partitions: partitions.map((p) => ({ partition: p, currentLeaderEpoch, leaderEpoch: LEADER_EPOCH })) }] };
}

/** The values of the records a fetch answered. */
function values(records: RecordsValue): string[] {
  return decodeRecords(decodedRecords(records)).map((r) => r.value?.toString() ?? '');
}

/** A handler's answer encoded and decoded as the client reads it. */
function asClientReads<Res>(api: Api<unknown, Res>, version: number, res: Wire<Res>): Res {
  const w = new Writer();
  api.encodeResponse(version, res, w);
  return api.decodeResponse(version, new Reader(Buffer.concat(w.finish())));
}

type Decision = { forwarded: true } | { forwarded: false; result: HandlerResult<unknown> };

/** Mesh rings of the smallest size: their largest message is 32 KiB less a frame header. */
const MESH_RING_BYTES = 64 << 10;

class Rig {
  readonly hosted = new HostedShard(0);
  readonly dir = this.hosted.open(HANDLE, 0);
  readonly reports: PlacedTraffic[] = [];
  /** Shard 1, joined to shard 0 by a mesh of MESH_RING_BYTES rings, when the rig has one. */
  readonly peer: HostedShard | null;
  readonly serving: PlacedServing;
  /** The connection's served Produces, which a forward waits for. */
  readonly produces = new ServedProduces();
  /** Every frame handed to main, as handed. */
  readonly forwarded: Buffer[] = [];
  private correlationId = 0;
  // Doorbell waits do not hold the loop (in the broker the worker's ports do).
  private readonly keepAlive = setInterval(() => undefined, 1000);

  /** `withPeer`: a second shard over the mesh; otherwise one shard, no mesh, no peers. */
  constructor(withPeer = false) {
    this.peer = withPeer ? new HostedShard(1) : null;
    let peers: (RingShardPort | null)[] = [null];
    if (this.peer !== null) {
      const ends = allocateShardMesh(2, MESH_RING_BYTES, ONE_MB);
      peers = joinShardMesh(this.hosted.shard, ends[0]!);
      joinShardMesh(this.peer.shard, ends[1]!);
    }
    this.serving = new PlacedServing(this.hosted.shard, peers, (t) => this.reports.push(t));
    this.serving.update(snapshot(0, [snapshotPartition(this.dir)]));
  }

  private readonly forward = (_ctx: HandlerContext, frame: Buffer): Promise<HandlerResult<unknown>> => {
    this.forwarded.push(frame);
    return Promise.resolve(NO_RESPONSE);
  };

  frame<Req>(api: Api<Req, unknown>, version: number, req: Req): Buffer {
    // handle() takes the frame after its size prefix, as the connection cuts it.
    return requestFrame(api, version, ++this.correlationId, req).subarray(4);
  }

  /** Hands `frame` to PlacedServing; forwarded when the spy saw it (then with the frame unchanged). */
  async decide(apiKey: number, version: number, frame: Buffer, forwardedPending = false): Promise<Decision> {
    const before = this.forwarded.length;
    const result = await this.serving.handle(requestContext(apiKey, version), frame, forwardedPending, this.forward, this.produces);
    if (this.forwarded.length === before) return { forwarded: false, result };
    assert.equal(this.forwarded.length, before + 1);
    assert.equal(this.forwarded[before], frame, 'the frame is forwarded as it came');
    return { forwarded: true };
  }

  async send<Req>(api: Api<Req, unknown>, version: number, req: Req, forwardedPending = false): Promise<Decision> {
    return this.decide(api.key, version, this.frame(api, version, req), forwardedPending);
  }

  async forwards<Req>(api: Api<Req, unknown>, version: number, req: Req, forwardedPending = false): Promise<boolean> {
    return (await this.send(api, version, req, forwardedPending)).forwarded;
  }

  /** The answer, as the client reads it, of a request the shard must serve. */
  async served<Req, Res>(api: Api<Req, Res>, version: number, req: Req): Promise<Res> {
    const d = await this.send(api, version, req);
    if (d.forwarded) assert.fail(`${api.name} v${version} was forwarded, not served`);
    return asClientReads(api as Api<unknown, Res>, version, answered(d.result as HandlerResult<Res>));
  }

  /** Partition 0's log end offset, as a served ListOffsets answers it. */
  async logEnd(): Promise<number> {
    const res = await this.served(ListOffsetsApi, 7, listOffsetsRequest([0]));
    return res.topics[0]!.partitions[0]!.offset;
  }

  /** Partition 0 is led here with `follower` as a second replica (out of the ISR), as the shard's role has it. */
  followedBy(follower: number): void {
    this.hosted.shard.setBrokers(TEST_BROKER_ID, [...SOLE_BROKER, { id: follower, epoch: 1, isrEligible: true, endpoint: null }]);
    this.hosted.shard.setRoles([{ handle: HANDLE, role: {
      kind: 'leader', topicId: TEST_TOPIC_ID, leaderEpoch: LEADER_EPOCH, partitionEpoch: LEADER_EPOCH, replicas: [TEST_BROKER_ID, follower], isr: [TEST_BROKER_ID], minInsyncReplicas: 1,
    } }]);
  }

  async close(): Promise<void> {
    await this.hosted.close();
    await this.peer?.close();
    clearInterval(this.keepAlive);
    assert.deepEqual(this.hosted.errors, []);
    assert.deepEqual(this.peer?.errors ?? [], []);
  }
}

// Registered first, so real timers are back before the rigs close.
afterEach(() => mock.timers.reset());
const rig = closedAfterEach((withPeer?: boolean) => new Rig(withPeer));

const BOUNDED = { timeout: 15_000 };

describe('PlacedServing: what a shard serves for its placed connections', () => {
  it('serves Produce, Fetch, ListOffsets and OffsetForLeaderEpoch into the shard: the served produce is read back', BOUNDED, async () => {
    const r = rig();
    const produced = await r.served(ProduceApi, 9, produceRequest([0], ['a', 'b', 'c']));
    assert.deepEqual(produced.responses[0]!.partitionResponses.map((p) => [p.index, p.errorCode, p.baseOffset]), [[0, ErrorCode.NONE, 0]]);
    const fetched = (await r.served(FetchApi, 12, fetchRequest())).responses[0]!.partitions[0]!;
    assert.equal(fetched.errorCode, ErrorCode.NONE);
    assert.equal(fetched.highWatermark, 3);
    assert.deepEqual(values(fetched.records), ['a', 'b', 'c']);
    assert.equal(await r.logEnd(), 3);
    const ends = await r.served(OffsetForLeaderEpochApi, 4, epochRequest(0, LEADER_EPOCH));
    assert.deepEqual(ends.topics[0]!.partitions.map((p) => [p.errorCode, p.leaderEpoch, p.endOffset]), [[ErrorCode.NONE, LEADER_EPOCH, 3]]);
    assert.equal(r.forwarded.length, 0);
  });

  it('serves only with nothing owed to the connection, an open snapshot at the fence or past it, a partition it holds and no other epoch', BOUNDED, async () => {
    const r = rig();
    const part = snapshotPartition(r.dir);
    let fence = 0;
    for (const pending of [false, true]) {
      for (const open of [true, false]) {
        for (const revisionFromFence of [-1, 0, 1]) {
          for (const partition of [0, 1]) {
            for (const currentLeaderEpoch of [NO_EPOCH, LEADER_EPOCH, LEADER_EPOCH + 1]) {
              // The fence only rises: each case starts above the last one's revisions.
              fence += 2;
              r.serving.answeredAt(fence);
              r.serving.update(snapshot(fence + revisionFromFence, [part], open));
              const serves = !pending && open && revisionFromFence >= 0 && partition === 0 && currentLeaderEpoch !== LEADER_EPOCH + 1;
              const forwarded = await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([partition], currentLeaderEpoch), pending);
              assert.equal(forwarded, !serves, JSON.stringify({ pending, open, revisionFromFence, partition, currentLeaderEpoch }));
            }
          }
        }
      }
    }
  });

  it('forwards a produce while main owes the connection an answer, and appends nothing here', BOUNDED, async () => {
    const r = rig();
    assert.equal(await r.forwards(ProduceApi, 9, produceRequest([0], ['x']), true), true);
    assert.equal(await r.forwards(FetchApi, 12, fetchRequest(), true), true);
    assert.equal(await r.forwards(OffsetForLeaderEpochApi, 4, epochRequest(0), true), true);
    assert.equal(await r.logEnd(), 0);
  });

  it('keeps the fence at the highest revision main answered at', BOUNDED, async () => {
    const r = rig();
    const part = snapshotPartition(r.dir);
    r.serving.answeredAt(5);
    assert.equal(await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([0])), true, 'snapshot 0 is behind answer 5');
    r.serving.update(snapshot(5, [part]));
    assert.equal(await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([0])), false, 'snapshot 5 reached the fence');
    r.serving.answeredAt(7);
    r.serving.answeredAt(3);
    assert.equal(await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([0])), true, 'an older answer does not lower the fence');
    r.serving.update(snapshot(7, [part]));
    assert.equal(await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([0])), false);
  });

  it('forwards whole a request naming any partition the snapshot lacks', BOUNDED, async () => {
    const r = rig();
    assert.equal(await r.forwards(ProduceApi, 9, produceRequest([0, 1], ['x'])), true);
    assert.equal(await r.forwards(ProduceApi, 9, { ...produceRequest([0], ['x']), topicData: [{ name: 'other', partitionData: [{ index: 0, records: null }] }] }), true);
    assert.equal(await r.forwards(FetchApi, 12, fetchRequest({ partition: 1 })), true);
    assert.equal(await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([0, 1])), true);
    assert.equal(await r.forwards(OffsetForLeaderEpochApi, 4, epochRequest(1)), true);
    assert.equal(await r.logEnd(), 0, 'partition 0\'s part of the produce was not appended here');
    // A snapshot without partition 0: nothing of it is served any more.
    r.serving.update(snapshot(1, []));
    assert.equal(await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([0])), true);
  });

  it('forwards a current leader epoch other than the snapshot\'s (Fetch, ListOffsets, OffsetForLeaderEpoch), serves an equal one or none', BOUNDED, async () => {
    const r = rig();
    for (const [epoch, forwarded] of [[LEADER_EPOCH + 1, true], [LEADER_EPOCH, false], [NO_EPOCH, false]] as const) {
      assert.equal(await r.forwards(FetchApi, 12, fetchRequest({ currentLeaderEpoch: epoch })), forwarded, `Fetch at epoch ${epoch}`);
      assert.equal(await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([0], epoch)), forwarded, `ListOffsets at epoch ${epoch}`);
      assert.equal(await r.forwards(OffsetForLeaderEpochApi, 4, epochRequest(0, epoch)), forwarded, `OffsetForLeaderEpoch at epoch ${epoch}`);
    }
  });

  it('forwards a replica\'s OffsetForLeaderEpoch (v3+), serves a consumer\'s', BOUNDED, async () => {
    const r = rig();
    const follower = TEST_BROKER_ID + 1;
    assert.equal(await r.forwards(OffsetForLeaderEpochApi, 3, epochRequest(0, NO_EPOCH, follower)), true);
    assert.equal(await r.forwards(OffsetForLeaderEpochApi, 3, epochRequest(0, NO_EPOCH, CONSUMER)), false);
    // Before v3 the request carries no replica id: the decoded default (-2) is a consumer's.
    assert.equal(await r.forwards(OffsetForLeaderEpochApi, 2, epochRequest(0, NO_EPOCH, follower)), false);
  });

  it('serves a follower\'s Fetch of a partition the snapshot names it a replica of and the leader throttle does not list, forwards the rest', BOUNDED, async () => {
    const r = rig();
    const follower = TEST_BROKER_ID + 1;
    const outsider = TEST_BROKER_ID + 2;
    r.followedBy(follower);
    r.serving.update(snapshot(1, [snapshotPartition(r.dir, { replicas: [TEST_BROKER_ID, follower] })]));
    await r.served(ProduceApi, 9, produceRequest([0], ['a', 'b']));
    for (const [version, shape] of [[12, { replicaId: follower }], [15, { stateReplicaId: follower }]] as const) {
      const fetched = (await r.served(FetchApi, version, fetchRequest(shape))).responses[0]!.partitions[0]!;
      assert.equal(fetched.errorCode, ErrorCode.NONE, `v${version}`);
      assert.deepEqual(values(fetched.records), ['a', 'b'], `v${version}`);
    }
    // Not a replica in the snapshot (main's newer image may say otherwise), or this broker itself: main decides.
    assert.equal(await r.forwards(FetchApi, 12, fetchRequest({ replicaId: outsider })), true);
    assert.equal(await r.forwards(FetchApi, 15, fetchRequest({ stateReplicaId: TEST_BROKER_ID })), true);
    // Listed by the leader throttle: main owns its quota.
    const throttled = (list: string): SnapshotPartition => snapshotPartition(r.dir, { replicas: [TEST_BROKER_ID, follower], configs: { 'leader.replication.throttled.replicas': list } });
    r.serving.update(snapshot(2, [throttled(`0:${follower}`)]));
    assert.equal(await r.forwards(FetchApi, 12, fetchRequest({ replicaId: follower })), true);
    r.serving.update(snapshot(3, [throttled('*')]));
    assert.equal(await r.forwards(FetchApi, 12, fetchRequest({ replicaId: follower })), true);
    r.serving.update(snapshot(4, [throttled(`0:${outsider}`)]));
    assert.equal(await r.forwards(FetchApi, 12, fetchRequest({ replicaId: follower })), false);
    // What it served a follower counts as replication bytes, its serving time as a replica's.
    r.serving.reportNow();
    const report = r.reports.at(-1)!;
    assert.ok(report.replicaBytesOut > 0 && report.replicaBytesOut <= report.bytesOut);
    assert.deepEqual(report.fetchServes.map(([kind, times]) => [kind, times.count > 0]), [['replica', true]]);
  });

  it('answers a follower\'s Fetch parked here once a snapshot brings a leadership it replicates', BOUNDED, async () => {
    const r = rig();
    const follower = TEST_BROKER_ID + 1;
    r.followedBy(follower);
    const replicas = [TEST_BROKER_ID, follower];
    r.serving.update(snapshot(1, [snapshotPartition(r.dir, { replicas })]));
    // Nothing to read: it parks for its 10 s.
    const parked = r.send(FetchApi, 12, fetchRequest({ replicaId: follower, maxWaitMs: 10_000 }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    // Partition 1 led here from now on, replicated by the follower (handle 1; the release needs no open partition).
    r.serving.update(snapshot(2, [snapshotPartition(r.dir, { replicas }), snapshotPartition(r.dir, { partition: 1, handle: 1, replicas })]));
    const d = await parked;
    assert.equal(d.forwarded, false);
    assert.ok(performance.now() - started < 2000, `answered ${Math.round(performance.now() - started)} ms after the snapshot`);
  });

  it('forwards a Fetch v13+ naming a topic id the snapshot does not know, serves a known one', BOUNDED, async () => {
    const r = rig();
    assert.equal(await r.forwards(FetchApi, 13, fetchRequest({ topicId: OTHER_TOPIC_ID })), true);
    assert.equal(await r.forwards(FetchApi, 13, fetchRequest()), false);
  });

  it('forwards a frame it cannot decode, as it came', BOUNDED, async () => {
    const r = rig();
    const whole = r.frame(ProduceApi, 9, produceRequest([0], ['x']));
    const cut = whole.subarray(0, whole.length - 8);
    assert.equal((await r.decide(ProduceApi.key, 9, cut)).forwarded, true);
    assert.equal(await r.logEnd(), 0);
  });

  it('reports the requests it served, not the forwarded ones, once a second', BOUNDED, async () => {
    const r = rig();
    mock.timers.enable({ apis: ['setTimeout'] });
    await r.served(ProduceApi, 9, produceRequest([0], ['a', 'b']));
    await r.logEnd();
    assert.equal(await r.forwards(ListOffsetsApi, 7, listOffsetsRequest([1])), true);
    mock.timers.tick(999);
    assert.equal(r.reports.length, 0, 'nothing before the second is up');
    mock.timers.tick(1);
    assert.equal(r.reports.length, 1);
    const report = r.reports[0]!;
    assert.equal(report.served, 2);
    assert.equal(report.messagesIn, 2);
    assert.ok(report.bytesIn > 0);
    // Durations as bucket counts per API, one for each request served here.
    assert.deepEqual(report.requests.map(([api, times]) => [api, times.count, times.counts.reduce((x, y) => x + y)]), [['Produce', 1, 1], ['ListOffsets', 1, 1]]);
    // Counts start again after a report, and an idle shard reports nothing.
    mock.timers.tick(5000);
    assert.equal(r.reports.length, 1);
    await r.logEnd();
    mock.timers.tick(1000);
    assert.deepEqual(r.reports.map((t) => t.served), [2, 1]);
    assert.deepEqual(r.reports[1]!.requests.map(([api, times]) => [api, times.count]), [['ListOffsets', 1]]);
  });

  it('closes the reader\'s descriptors of a partition that left the snapshot', BOUNDED, async () => {
    const r = rig();
    await r.served(ProduceApi, 9, produceRequest([0], ['a']));
    const segment = join(r.dir, '00000000000000000000.log');
    const heldByLog = openUnder(segment);
    assert.deepEqual(values((await r.served(FetchApi, 12, fetchRequest())).responses[0]!.partitions[0]!.records), ['a']);
    assert.equal(openUnder(segment), heldByLog + 1, 'the served fetch left the reader\'s descriptor cached');
    r.serving.update(snapshot(1, [snapshotPartition(r.dir)]));
    assert.equal(openUnder(segment), heldByLog + 1, 'a partition still in the snapshot keeps it');
    r.serving.update(snapshot(2, []));
    await waitFor(() => openUnder(segment) === heldByLog, 'the reader closed the segment of the partition that left');
  });

  it('serves a peer shard\'s partition over the mesh, and forwards what the peer\'s ring cannot take', BOUNDED, async () => {
    const r = rig(true);
    const peerDir = r.peer!.open(1, 1);
    // Partition 1 lives on shard 1; partitions 2.. are in the snapshot only (nothing served reaches them).
    const MANY = 1000;
    const onlyListed = Array.from({ length: MANY }, (_, i) => snapshotPartition(peerDir, { partition: 2 + i, handle: 2 + i, shard: 1 }));
    r.serving.update(snapshot(1, [snapshotPartition(r.dir), snapshotPartition(peerDir, { partition: 1, handle: 1, shard: 1 }), ...onlyListed]));

    const small = await r.served(ProduceApi, 9, produceRequest([1], ['a', 'b']));
    assert.deepEqual(small.responses[0]!.partitionResponses.map((p) => [p.index, p.errorCode, p.baseOffset]), [[1, ErrorCode.NONE, 0]]);
    const fetched = (await r.served(FetchApi, 12, fetchRequest({ partition: 1 }))).responses[0]!.partitions[0]!;
    assert.deepEqual([fetched.errorCode, fetched.highWatermark, values(fetched.records)], [ErrorCode.NONE, 2, ['a', 'b']], 'read back over the mesh');

    // A batch larger than the peer's ring takes goes to main (whose rings take it), not into the mesh.
    const big = Buffer.alloc(MESH_RING_BYTES / 2, 7);
    assert.equal(await r.forwards(ProduceApi, 9, produceRequest([1], [big])), true, 'a batch too large for the mesh is forwarded');
    assert.equal(await r.forwards(ProduceApi, 9, produceRequest([0], [big])), false, 'the same batch for this shard\'s own partition is served');

    const many = onlyListed.map((p) => p.record.partition);
    assert.equal(await r.forwards(FetchApi, 12, fetchRequest({}, many)), true, `a Fetch naming ${MANY} of the peer's partitions is forwarded`);
    const lookups = [...many, ...many, ...many];
    assert.equal(await r.forwards(ListOffsetsApi, 7, { ...listOffsetsRequest([]), topics: [{ name: HOSTED_TOPIC, partitions: lookups.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: NO_EPOCH, timestamp: LATEST })) }] }), true, 'so is a ListOffsets naming 3000');
    assert.equal(await r.forwards(OffsetForLeaderEpochApi, 4, epochRequest(0, NO_EPOCH, CONSUMER, lookups)), true, 'and an OffsetForLeaderEpoch');
    assert.equal(await r.logEnd(), 1, 'the big batch served on this shard was appended');
  });
});
