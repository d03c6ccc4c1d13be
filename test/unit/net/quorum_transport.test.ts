// The quorum transport over loopback: controllers with a real Connection server each, the
// transport's inbound hook as their quorum handlers. Messages arrive as the core sent them and
// answers find their way back; EndQuorumEpoch is acknowledged without the core; another
// cluster's requests never reach the core; a peer that is down gets the newest queued messages
// once it is up (the oldest dropped beyond the bound); an unanswered request times out.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import type { QuorumRequest } from '../../../src/coordinator/raft/quorum_wire.js';
import type { Entry, Message } from '../../../src/coordinator/raft/types.js';
import { createLogger } from '../../../src/common/logger.js';
import { Connection, HeldBytes } from '../../../src/net/connection.js';
import type { BoundHandler } from '../../../src/net/handler.js';
import { QuorumTransport, type QuorumPeer, type QuorumTransportOptions } from '../../../src/net/quorum_transport.js';
import { apiByKey } from '../../../src/protocol/apis/index.js';
import { PLAINTEXT_PEER } from '../../../src/common/peer_socket.js';
import { encodeVoters } from '../../../src/coordinator/raft/entry_batches.js';

const CLUSTER = 'loopback-cluster';
const QUORUM_KEYS = [1, 52, 53, 54, 59];
const log = createLogger('silent');

class Inbox {
  readonly messages: Message[] = [];
  private waiter: (() => void) | null = null;
  push = (m: Message): void => {
    this.messages.push(m);
    this.waiter?.();
  };

  async next(timeoutMs = 3000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length === 0) {
      if (Date.now() > deadline) throw new Error('no message arrived');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 50);
      });
    }
    return this.messages.shift()!;
  }
}

interface Node {
  readonly transport: QuorumTransport;
  readonly inbox: Inbox;
  readonly port: number;
}

const servers: { server: Server; sockets: Set<Socket> }[] = [];
const transports: QuorumTransport[] = [];

after(() => {
  for (const t of transports) t.close();
  for (const { server, sockets } of servers) {
    for (const s of sockets) s.destroy();
    server.close();
  }
});

/** A Kafka server whose only handlers are the quorum APIs, bound to the transport's inbound hook. */
async function serve(transport: QuorumTransport, port = 0): Promise<number> {
  const handlers = new Map<number, BoundHandler>(QUORUM_KEYS.map((key) => [key, {
    api: apiByKey.get(key)!,
    barrier: false,
    handle: async (ctx, req) => (await transport.receive({ apiKey: key, version: ctx.version, body: req } as QuorumRequest)).body,
  }]));
  const services = {
    handlers,
    metrics: { protocolError: () => {}, recordRequest: () => {}, addSocketBytesIn: () => {}, addSocketBytesOut: () => {} },
    releaseLeases: () => {},
    blockedShards: () => [],
  };
  const limits = { maxRequestBytes: 1 << 20, maxInflight: 8, idleTimeoutMs: 60_000, maxQueuedResponseBytes: 1 << 22 };
  const held = new HeldBytes(1 << 24);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    new Connection(socket, services, limits, held, log, () => {});
  });
  servers.push({ server, sockets });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

function transport(self: number, peers: QuorumPeer[], inbox: Inbox, overrides: Partial<QuorumTransportOptions> = {}): QuorumTransport {
  const t = new QuorumTransport({
    self, clusterId: CLUSTER, peers, maxPeers: 8, deliver: inbox.push, isVoter: () => true, security: PLAINTEXT_PEER,
    maxQueuedPerPeer: 16, maxInflightPerPeer: 4, requestTimeoutMs: 2000, maxPendingInbound: 64, maxResponseBytes: 1 << 22,
    backoff: { baseMs: 20, maxMs: 100 },
    ...overrides,
  });
  transports.push(t);
  return t;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('quorum transport over loopback', () => {
  it('carries a vote to its peer and the answer back', async () => {
    const [a, b] = await pairServedBy();
    const vote: Message = { type: 'vote', from: 1, to: 2, epoch: 3, preVote: true, lastEpoch: 2, lastOffset: 17 };
    a.transport.send(vote);
    assert.deepStrictEqual(await b.inbox.next(), vote);
    const granted: Message = { type: 'voteResponse', from: 2, to: 1, epoch: 3, preVote: true, granted: true, leaderId: -1 };
    b.transport.send(granted);
    assert.deepStrictEqual(await a.inbox.next(), granted);
  });

  it('carries a fetch and a fetch response with entries as record batches', async () => {
    const [a, b] = await pairServedBy();
    const fetch: Message = { type: 'fetch', from: 2, to: 1, epoch: 4, fetchOffset: 5, lastFetchedEpoch: 3, maxBytes: 65536, observer: false };
    b.transport.send(fetch);
    assert.deepStrictEqual(await a.inbox.next(), fetch);
    const entries: Entry[] = [
      { offset: 5, epoch: 4, kind: 'leaderChange', data: new Uint8Array(0) },
      { offset: 6, epoch: 4, kind: 'data', data: new Uint8Array([1, 2, 3]) },
      { offset: 7, epoch: 4, kind: 'voters', data: encodeVoters([1, 2, 3]) },
    ];
    const answer: Message = {
      type: 'fetchResponse', from: 1, to: 2, epoch: 4, errorCode: 0, leaderId: 1, fetchOffset: 5, lastFetchedEpoch: 3,
      entries, highWatermark: 6, divergingEpoch: null, snapshotId: null,
    };
    a.transport.send(answer);
    assert.deepStrictEqual(await b.inbox.next(), answer);
  });

  it('acknowledges EndQuorumEpoch without the core and delivers nothing back', async () => {
    const [a, b] = await pairServedBy();
    const end: Message = { type: 'endQuorumEpoch', from: 1, to: 2, epoch: 5, preferredSuccessors: [2, 3] };
    a.transport.send(end);
    assert.deepStrictEqual(await b.inbox.next(), end);
    await sleep(100);
    assert.equal(a.inbox.messages.length, 0);
    assert.deepStrictEqual(a.transport.stats, { dropped: 0, refused: 0, unanswerable: 0, connectionFailures: 0 });
  });

  it("keeps another cluster's requests from the core and counts the refusal", async () => {
    const [, b] = await pairServedBy();
    const strangerInbox = new Inbox();
    const stranger = transport(9, [{ id: 2, host: '127.0.0.1', port: b.port }], strangerInbox, { clusterId: 'other-cluster' });
    stranger.send({ type: 'vote', from: 9, to: 2, epoch: 1, preVote: false, lastEpoch: 0, lastOffset: 0 });
    for (let i = 0; i < 60 && stranger.stats.refused === 0; i++) await sleep(50);
    assert.equal(stranger.stats.refused, 1);
    assert.equal(b.inbox.messages.length, 0);
    assert.equal(strangerInbox.messages.length, 0);
  });

  it('reconnects to a peer that comes up late and sends it the newest queued messages', async () => {
    const port = await freePort();
    const senderInbox = new Inbox();
    const sender = transport(4, [{ id: 5, host: '127.0.0.1', port }], senderInbox, { maxQueuedPerPeer: 2, maxInflightPerPeer: 1 });
    for (let offset = 0; offset < 4; offset++) {
      sender.send({ type: 'beginQuorumEpoch', from: 4, to: 5, epoch: offset });
    }
    assert.equal(sender.stats.dropped, 2);
    await sleep(150);
    assert.ok(sender.stats.connectionFailures >= 1, 'the first connection attempts are refused');
    const receiverInbox = new Inbox();
    const receiver = transport(5, [], receiverInbox);
    await serve(receiver, port);
    const first = await receiverInbox.next();
    assert.deepStrictEqual(first, { type: 'beginQuorumEpoch', from: 4, to: 5, epoch: 2 });
    receiver.send({ type: 'beginQuorumEpochResponse', from: 5, to: 4, epoch: 2 });
    assert.deepStrictEqual(await senderInbox.next(), { type: 'beginQuorumEpochResponse', from: 5, to: 4, epoch: 2 });
    assert.deepStrictEqual(await receiverInbox.next(), { type: 'beginQuorumEpoch', from: 4, to: 5, epoch: 3 });
  });

  it('reports a peer unreachable when its connection is refused or reset, and not while it answers', async () => {
    const port = await freePort();
    const reported: number[] = [];
    const refusals: boolean[] = [];
    const sender = transport(4, [{ id: 5, host: '127.0.0.1', port }], new Inbox(), { unreachable: (id, refused) => { reported.push(id); refusals.push(refused); } });
    sender.send({ type: 'beginQuorumEpoch', from: 4, to: 5, epoch: 1 });
    for (let i = 0; i < 40 && reported.length === 0; i++) await sleep(10);
    assert.equal(reported[0], 5, 'a refused connection is reported');
    assert.equal(refusals[0], true, 'as refused: nothing listens there');
    const receiverInbox = new Inbox();
    const receiver = transport(5, [], receiverInbox);
    await serve(receiver, port);
    await receiverInbox.next();
    reported.length = 0;
    refusals.length = 0;
    sender.send({ type: 'beginQuorumEpoch', from: 4, to: 5, epoch: 2 });
    await receiverInbox.next();
    assert.deepStrictEqual(reported, [], 'a working connection reports nothing');
    // The peer process dies: its sockets close under the sender at once.
    for (const socket of servers[servers.length - 1]!.sockets) socket.destroy();
    for (let i = 0; i < 40 && reported.length === 0; i++) await sleep(10);
    assert.equal(reported[0], 5, 'a reset connection is reported');
    assert.equal(refusals[0], false, 'a reset is not a refusal');
  });

  it('learns voters from their endpoints: a new one, a moved one, never itself, and at most maxPeers', () => {
    const t = transport(1, [{ id: 2, host: '127.0.0.1', port: 1 }], new Inbox(), { maxPeers: 3 });
    const at = (port: number) => [{ name: 'CONTROLLER', host: '127.0.0.1', port }];
    t.learnPeers(new Map([[1, at(9)], [3, at(3)], [2, at(1)]]));
    assert.deepStrictEqual(t.peerIds.sort(), [2, 3]);
    t.learnPeers(new Map([[4, at(4)], [5, at(5)], [2, at(7)]]));
    assert.deepStrictEqual(t.peerIds.sort(), [2, 3, 4], 'node 5 is past the bound; node 2 moved and keeps its place');
  });

  it('answers a request the core leaves unanswered with REQUEST_TIMED_OUT, which the sender drops', async () => {
    const receiverInbox = new Inbox();
    const receiver = transport(7, [], receiverInbox, { requestTimeoutMs: 200 });
    const port = await serve(receiver);
    const senderInbox = new Inbox();
    const sender = transport(6, [{ id: 7, host: '127.0.0.1', port }], senderInbox);
    sender.send({ type: 'fetchSnapshot', from: 6, to: 7, epoch: 2, snapshotId: { endOffset: 10, epoch: 1 }, position: 0, maxBytes: 1024 });
    await receiverInbox.next();
    for (let i = 0; i < 60 && sender.stats.refused === 0; i++) await sleep(50);
    assert.equal(sender.stats.refused, 1);
    assert.equal(senderInbox.messages.length, 0);
    // The late answer finds nothing to answer.
    receiver.send({ type: 'fetchSnapshotResponse', from: 7, to: 6, epoch: 2, errorCode: 0, leaderId: 7, snapshot: null, position: 0, bytes: new Uint8Array(0) });
    assert.equal(receiver.stats.unanswerable, 1);
  });
});

describe('quorum transport inbound bound', () => {
  it('answers requests beyond maxPendingInbound at once and keeps them from the core', async () => {
    const inbox = new Inbox();
    const node = transport(1, [], inbox, { maxPendingInbound: 2 });
    const voteFrom = (from: number): QuorumRequest => {
      const body = {
        clusterId: CLUSTER, voterId: 1,
        topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0, candidateEpoch: 2, candidateId: from, candidateDirectoryId: '0'.repeat(32), voterDirectoryId: '0'.repeat(32), lastOffsetEpoch: 1, lastOffset: 5, preVote: false }] }],
      };
      return { apiKey: 52, version: 2, body };
    };
    const answers = [2, 3, 4].map((from) => node.receive(voteFrom(from)));
    const third = await answers[2]!;
    assert.equal(third.body.errorCode, 7, 'REQUEST_TIMED_OUT');
    assert.deepStrictEqual(inbox.messages.map((m) => m.from), [2, 3]);
    node.send({ type: 'voteResponse', from: 1, to: 2, epoch: 2, preVote: false, granted: true, leaderId: -1 });
    assert.equal((await answers[0]!).body.errorCode, 0);
    node.close();
    assert.equal((await answers[1]!).body.errorCode, 7);
  });
});

/** Two controllers whose servers hand requests to the same transports that send. */
async function pairServedBy(): Promise<[Node, Node]> {
  const [pa, pb] = [await freePort(), await freePort()];
  const ia = new Inbox();
  const ib = new Inbox();
  const a = transport(1, [{ id: 2, host: '127.0.0.1', port: pb }], ia);
  const b = transport(2, [{ id: 1, host: '127.0.0.1', port: pa }], ib);
  await serve(a, pa);
  await serve(b, pb);
  return [{ transport: a, inbox: ia, port: pa }, { transport: b, inbox: ib, port: pb }];
}
