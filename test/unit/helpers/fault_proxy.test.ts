// The fault-injecting proxy of the slow-follower row, against a fake Fetch leader: it forwards
// unchanged, holds exactly the chosen replica's Fetch answers (replica id in the body before v15,
// in the tagged ReplicaState from v15) for its delay or throughput cap, keeps a connection's
// answers in order, releases what it holds when lifted, and closes cleanly.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { FetchApi, type FetchRequest } from '../../../src/protocol/apis/fetch.js';
import { FrameReader, encodeRequestFrame } from '../../../src/protocol/framing.js';
import { FaultProxy } from '../../helpers/fault_proxy.js';
import { FakeFetchLeader, answerPartition, fetchResponse } from '../../helpers/fake_fetch_leader.js';
import { ZERO_UUID, fetchRequest } from '../../helpers/read_back.js';
import { sleep } from '../../helpers/broker_process.js';

/** Answers this big let the throughput cap show. */
const BIG = 200_000;
/** The held answers' delay; answers not held must come well within it even on a loaded machine. */
const DELAY_MS = 1_500;
const PROMPT_MS = 1_000;
let leader: FakeFetchLeader;

before(async () => {
  // A consumer's fetch (replica -1) of partition 1 gets a big answer, everything else an empty one.
  leader = await FakeFetchLeader.start(({ request }) => {
    const big = request.topics[0]?.partitions[0]?.partition === 1;
    return fetchResponse([{ topic: '', topicId: ZERO_UUID, partitions: [answerPartition(0, big ? { records: Buffer.alloc(BIG) } : {})] }]);
  });
});
after(async () => {
  await leader.close();
});

/** A raw client: sends Fetch frames and notes when each answer (by correlation id) arrived. */
class Client {
  readonly answered = new Map<number, number>();
  readonly order: number[] = [];
  private next = 0;

  private constructor(private readonly socket: Socket) {
    const frames = new FrameReader(1 << 24);
    socket.on('data', (d: Buffer) => frames.push(d, (f) => {
      this.answered.set(f.readInt32BE(0), performance.now());
      this.order.push(f.readInt32BE(0));
    }));
  }

  static async open(port: number): Promise<Client> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new Client(socket);
  }

  /** A Fetch from `replicaId` (-1: a consumer) at `version`; returns its correlation id. */
  fetch(replicaId: number, version: number, partition = 0): number {
    const base = fetchRequest('t', ZERO_UUID, partition, 0, 1 << 20);
    const req: FetchRequest = { ...base, replicaId: version < 15 ? replicaId : -1, replicaState: { replicaId: version >= 15 ? replicaId : -1, replicaEpoch: 7 } };
    const correlationId = ++this.next;
    for (const chunk of encodeRequestFrame(FetchApi, version, correlationId, 'proxy-test', req)) this.socket.write(chunk);
    return correlationId;
  }

  async answerOf(correlationId: number, ms = 5000): Promise<number> {
    const deadline = performance.now() + ms;
    while (!this.answered.has(correlationId)) {
      if (performance.now() > deadline) throw new Error(`no answer to ${correlationId} within ${ms} ms`);
      await sleep(5);
    }
    return this.answered.get(correlationId) as number;
  }

  closed(): Promise<void> {
    return new Promise((resolve) => (this.socket.destroyed ? resolve() : this.socket.once('close', () => resolve())));
  }

  close(): void {
    this.socket.destroy();
  }
}

test('only the chosen replica\'s Fetch answers are held, whichever version carries its id', async () => {
  const proxy = await FaultProxy.start(leader.port);
  try {
    proxy.slow({ replicaId: 2, delayMs: DELAY_MS });
    for (const version of [11, 17]) {
      const slowed = await Client.open(proxy.port);
      const other = await Client.open(proxy.port);
      const t0 = performance.now();
      const held = slowed.fetch(2, version);
      const passed = other.fetch(3, version);
      const consumer = other.fetch(-1, version);
      assert.ok((await other.answerOf(passed)) - t0 < PROMPT_MS, `v${version}: replica 3's answer is not held`);
      assert.ok((await other.answerOf(consumer)) - t0 < PROMPT_MS, `v${version}: a consumer's answer is not held`);
      assert.ok((await slowed.answerOf(held)) - t0 >= DELAY_MS - 10, `v${version}: replica 2's answer waits out the delay`);
      slowed.close();
      other.close();
    }
    assert.equal(proxy.slowedAnswers, 2);
  } finally {
    await proxy.close();
  }
});

test('a held answer holds the later ones of its connection, and lifting releases them at once', async () => {
  const proxy = await FaultProxy.start(leader.port);
  const client = await Client.open(proxy.port);
  try {
    proxy.slow({ replicaId: 2, delayMs: 60_000 });
    const t0 = performance.now();
    const held = client.fetch(2, 17);
    await sleep(50);
    const behind = client.fetch(-1, 17);
    await sleep(300);
    assert.equal(client.answered.size, 0, 'nothing overtakes the held answer');
    proxy.slow(null);
    await client.answerOf(behind);
    assert.deepEqual(client.order, [held, behind], 'answers leave in request order');
    assert.ok(performance.now() - t0 < 5_000, 'lifting released the held answer long before its delay');
    // Lifted: answers pass at once again.
    const t1 = performance.now();
    assert.ok((await client.answerOf(client.fetch(2, 17))) - t1 < PROMPT_MS);
  } finally {
    client.close();
    await proxy.close();
  }
});

test('a throughput cap spaces the chosen replica\'s answers by their size', async () => {
  const proxy = await FaultProxy.start(leader.port);
  const client = await Client.open(proxy.port);
  try {
    // Two answers of BIG bytes at 1 MB/s: the second leaves ~BIG/1e6 s after the first, which
    // left no earlier than it was asked for. (Timed from the request, not from the first answer's
    // arrival: on a loaded machine that arrival can lag its release.)
    proxy.slow({ replicaId: -1, delayMs: 0, bytesPerSecond: 1_000_000 });
    const asked = performance.now();
    const first = client.fetch(-1, 17, 1);
    const second = client.fetch(-1, 17, 1);
    await client.answerOf(first);
    const after = (await client.answerOf(second)) - asked;
    assert.ok(after >= (BIG / 1_000_000) * 1000 - 10, `second answer ${after.toFixed(0)} ms after the requests`);
  } finally {
    client.close();
    await proxy.close();
  }
});

test('close() ends every proxied connection and stops listening', async () => {
  const proxy = await FaultProxy.start(leader.port);
  const client = await Client.open(proxy.port);
  proxy.slow({ replicaId: 2, delayMs: 60_000 });
  client.fetch(2, 17);
  await sleep(100);
  await proxy.close();
  await client.closed();
  await assert.rejects(Client.open(proxy.port), /ECONNREFUSED/);
});
