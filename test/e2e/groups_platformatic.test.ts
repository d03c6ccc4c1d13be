// KIP-848 consumer groups end to end with @platformatic/kafka 1.x (`groupProtocol: 'consumer'`,
// ConsumerGroupHeartbeat v0-1 with server-side assignment): two members split a 6-partition
// topic, every message is consumed, and when one member leaves the other takes over its
// partitions from the committed offsets. Also the classic protocol with the same client.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Admin, Consumer, Producer, type MessagesStream } from '@platformatic/kafka';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';

let broker: BrokerProcess;
let admin: Admin;
let producer: Producer;
const consumers: Consumer[] = [];
const streams: MessagesStream<Buffer, Buffer, Buffer, Buffer>[] = [];

const base = (): { clientId: string; bootstrapBrokers: string[]; retries: number; retryDelay: number } =>
  ({ clientId: 'sluice-e2e-848', bootstrapBrokers: [broker.bootstrap], retries: 5, retryDelay: 200 });

before(async () => {
  broker = await BrokerProcess.start({ args: ['--group-initial-rebalance-delay-ms', '0', '--group-min-session-timeout-ms', '1000'] });
  admin = new Admin(base());
  producer = new Producer(base());
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  // A consumer refuses to leave its group while a stream is still consuming.
  for (const s of streams) await s.close().catch(() => undefined);
  for (const c of consumers) await c.close().catch(() => undefined);
  if (producer) await producer.close().catch(() => undefined);
  if (admin) await admin.close().catch(() => undefined);
  await broker?.dispose();
});

async function produce(topic: string, from: number, to: number, partitions: number): Promise<void> {
  const messages = [];
  for (let i = from; i < to; i++) messages.push({ topic, partition: i % partitions, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) });
  await producer.send({ messages });
}

/** A member and every "partition offset" it consumed. */
async function member(groupId: string, topic: string, protocol: 'consumer' | 'classic'): Promise<{ seen: Set<string>; stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>; consumer: Consumer }> {
  const options = protocol === 'consumer'
    ? { ...base(), groupId, groupProtocol: 'consumer' as const, maxWaitTime: 200, autocommit: 100 }
    : { ...base(), groupId, sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTime: 200, autocommit: 100 };
  const consumer = new Consumer(options);
  consumers.push(consumer);
  const stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest' });
  streams.push(stream);
  const seen = new Set<string>();
  stream.on('data', (m) => seen.add(`${m.partition} ${m.offset}`));
  return { seen, stream, consumer };
}

async function waitFor(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

for (const protocol of ['consumer', 'classic'] as const) {
  describe(`@platformatic/kafka group, ${protocol} protocol`, () => {
    it('splits partitions between members, hands them over on leave, loses nothing', { timeout: 90_000 }, async () => {
      const topic = `plat-group-${protocol}`;
      const partitions = 6;
      await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
      await produce(topic, 0, 600, partitions);
      const a = await member(`g-${protocol}`, topic, protocol);
      const b = await member(`g-${protocol}`, topic, protocol);
      const union = (): Set<string> => new Set([...a.seen, ...b.seen]);
      const owned = (c: Consumer): number => (c.assignments ?? []).reduce((n, t) => n + t.partitions.length, 0);
      await waitFor('the first 600 messages', () => union().size >= 600, 45_000);
      await waitFor('the partitions to be split', () => owned(a.consumer) > 0 && owned(b.consumer) > 0 && owned(a.consumer) + owned(b.consumer) === partitions, 30_000);
      // Fetches are not fenced by group membership (as in Kafka): a long poll the first member
      // sent before giving partitions up can still return their next records. Let any such poll
      // (maxWaitTime 200 ms) run out before producing, so the new records go to their new owner.
      await sleep(600);
      const before = { a: a.seen.size, b: b.seen.size };
      await produce(topic, 600, 900, partitions);
      await waitFor('messages 600-900', () => union().size >= 900, 45_000);
      assert.ok(a.seen.size > before.a && b.seen.size > before.b, `both members consume while the group is shared: before ${JSON.stringify(before)}, after a=${a.seen.size} b=${b.seen.size}`);

      await b.stream.close();
      await b.consumer.close();
      await waitFor('the remaining member to own every partition', () => owned(a.consumer) === partitions, 30_000);
      await produce(topic, 900, 1200, partitions);
      await waitFor('messages 900-1200', () => union().size >= 1200, 45_000);
      const all = union();
      for (let p = 0; p < partitions; p++) for (let o = 0; o < 200; o++) assert.ok(all.has(`${p} ${o}`), `partition ${p} offset ${o} consumed`);
    });
  });
}
