// Our consumer (src/client/consumer) against a real Sluice broker process, with kafkajs as the
// reference producer: manual assignment reads 10k records byte-identical (plus seek and the
// OFFSET_OUT_OF_RANGE reset); groups on the KIP-848 and classic (cooperative) protocols split
// partitions, hand them over incrementally when a member joins, and — committing in onRevoked,
// where any failed commit is a violation — consume everything exactly once and leave committed
// offsets at the log ends; commit metadata
// reaches the next owner through onAssigned.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin, Producer } from 'kafkajs';
import { Consumer } from '../../src/client/consumer/consumer.js';
import type { AssignedPartition, ConsumerOptions, TopicPartition } from '../../src/client/consumer/types.js';
import { BrokerProcess, sleep, withTimeout } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient, sendRange } from '../helpers/kafkajs_client.js';
import { assertRecordIs, testMessage } from '../helpers/messages.js';

let broker: BrokerProcess;
let admin: Admin;
let producer: Producer;
const open: Consumer[] = [];

before(async () => {
  broker = await BrokerProcess.start({
    args: ['--group-initial-rebalance-delay-ms', '0', '--group-consumer-heartbeat-interval-ms', '300', '--group-min-session-timeout-ms', '1000'],
  });
  const kafka = kafkajsClient(broker.bootstrap, 'client-consumer-e2e');
  admin = kafka.admin();
  await admin.connect();
  producer = await connectedProducer(kafka);
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  for (const c of open) await withTimeout(c.close(), 10_000, 'consumer close').catch(() => undefined);
  await producer?.disconnect().catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  await broker?.dispose();
});

function consumer(options: Omit<ConsumerOptions, 'brokers'>): Consumer {
  const c = new Consumer({ brokers: [broker.bootstrap], clientId: 'sluice-consumer-e2e', maxWaitMs: 200, ...options });
  open.push(c);
  return c;
}

async function createTopic(topic: string, partitions: number): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
}

async function waitFor(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

const PER_PARTITION = 1667;

describe('our consumer, manual assignment', () => {
  it('reads 10k records across 6 partitions byte-identical, seeks, and resets out-of-range positions', { timeout: 30_000 }, async () => {
    const topic = 'cc-assign';
    const tag = 'assign';
    await createTopic(topic, 6);
    for (let p = 0; p < 6; p++) await sendRange(producer, topic, tag, p * PER_PARTITION, (p + 1) * PER_PARTITION, { partition: p, batch: 500 });
    const c = consumer({ autoOffsetReset: 'earliest', partitionMaxBytes: 64 * 1024 });
    await c.assign([0, 1, 2, 3, 4, 5].map((partition) => ({ topic, partition })));
    assert.equal(c.protocol, 'none');
    const next = [0, 0, 0, 0, 0, 0];
    let total = 0;
    const deadline = Date.now() + 20_000;
    while (total < 6 * PER_PARTITION) {
      assert.ok(Date.now() < deadline, `only ${total} records within 20 s`);
      for (const b of await c.poll()) {
        for (const m of b.messages) {
          assert.equal(m.offset, next[b.partition], `partition ${b.partition} in order, no gaps or repeats`);
          assertRecordIs(m, testMessage(tag, b.partition * PER_PARTITION + m.offset), `${topic}-${b.partition}`);
          next[b.partition] = m.offset + 1;
          total++;
        }
        assert.equal(b.highWatermark, PER_PARTITION);
      }
    }
    assert.deepEqual(next, [PER_PARTITION, PER_PARTITION, PER_PARTITION, PER_PARTITION, PER_PARTITION, PER_PARTITION]);
    assert.deepEqual(await c.poll(), [], 'nothing more at the log end');

    // seek back inside a batch: the first record returned is exactly the one asked for.
    c.seek({ topic, partition: 0 }, 1234);
    const first = await firstOf(c, 0);
    assert.equal(first, 1234);
    // past the log end: OFFSET_OUT_OF_RANGE resets to earliest.
    c.seek({ topic, partition: 1 }, 999_999);
    assert.equal(await firstOf(c, 1), 0);
    // paused partitions are not returned, resumed ones are.
    c.pause([{ topic, partition: 2 }]);
    c.seek({ topic, partition: 2 }, 0);
    for (let i = 0; i < 3; i++) assert.ok((await c.poll()).every((b) => b.partition !== 2), 'paused partition fetched');
    c.resume([{ topic, partition: 2 }]);
    assert.equal(await firstOf(c, 2), 0);
  });
});

/** The offset of the first record polled for `partition` (bounded). */
async function firstOf(c: Consumer, partition: number): Promise<number> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const hit = (await c.poll()).find((b) => b.partition === partition);
    if (hit !== undefined) return (hit.messages[0] as { offset: number }).offset;
  }
  throw new Error(`no records of partition ${partition} within 5 s`);
}

interface Member {
  readonly name: string;
  readonly consumer: Consumer;
  readonly owned: Set<number>;
  readonly next: Map<number, number>;
  stop: AbortController;
  loop: Promise<void>;
}

/** Shared bookkeeping of one group test: who holds what, what was consumed, what went wrong. */
class GroupWatch {
  readonly consumed = new Map<string, number>();
  readonly holder = new Map<number, string>();
  readonly violations: string[] = [];
  /** Members that must keep at least one partition through a rebalance. */
  readonly staying = new Set<string>();
  lost = 0;

  member(name: string, topic: string, groupId: string, protocol: 'consumer' | 'classic'): Member {
    const owned = new Set<number>();
    const next = new Map<number, number>();
    const c: Consumer = consumer({
      groupId, groupProtocol: protocol, autoOffsetReset: 'earliest',
      sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, heartbeatIntervalMs: 300,
      listener: {
        onAssigned: (ps: readonly AssignedPartition[]) => {
          for (const p of ps) {
            const other = this.holder.get(p.partition);
            if (other !== undefined) this.violations.push(`${name} got ${p.partition} while ${other} still held it`);
            this.holder.set(p.partition, name);
            owned.add(p.partition);
          }
        },
        onRevoked: async (ps: readonly TopicPartition[]) => {
          const keeps = [...owned].filter((p) => !ps.some((x) => x.partition === p)).length;
          if (this.staying.has(name) && keeps === 0) this.violations.push(`${name} gave up all its partitions`);
          const offsets = ps.filter((p) => next.has(p.partition)).map((p) => ({ ...p, offset: next.get(p.partition) as number, metadata: `by ${name}` }));
          // A failed commit here loses the member's last offsets; recorded so that it fails the
          // test by name rather than as committed offsets behind the log end.
          await c.commit(offsets).catch((err: unknown) => {
            this.violations.push(`${name} commit in onRevoked failed: ${(err as Error).message}`);
          });
          // Slow revocation: the next owner must wait for it.
          await sleep(200);
          for (const p of ps) {
            owned.delete(p.partition);
            if (this.holder.get(p.partition) === name) this.holder.delete(p.partition);
          }
        },
        onLost: (ps: readonly TopicPartition[]) => {
          this.lost += ps.length;
          for (const p of ps) owned.delete(p.partition);
        },
      },
    });
    const stop = new AbortController();
    const m: Member = { name, consumer: c, owned, next, stop, loop: Promise.resolve() };
    m.loop = this.run(m, topic);
    return m;
  }

  private async run(m: Member, topic: string): Promise<void> {
    await m.consumer.subscribe([topic]);
    while (!m.stop.signal.aborted) {
      try {
        for (const b of await m.consumer.poll({ signal: m.stop.signal })) {
          for (const msg of b.messages) {
            const key = `${b.partition}:${msg.offset}`;
            this.consumed.set(key, (this.consumed.get(key) ?? 0) + 1);
            m.next.set(b.partition, msg.offset + 1);
          }
        }
      } catch (err) {
        if (m.stop.signal.aborted) break;
        if (this.violations.length < 20) this.violations.push(`${m.name} poll failed: ${(err as Error).message}`);
        await sleep(100);
      }
    }
  }

  async close(m: Member): Promise<void> {
    m.stop.abort();
    await withTimeout(m.loop, 5000, `${m.name} poll loop`);
    await withTimeout(m.consumer.close(), 15_000, `${m.name} close`);
  }
}

async function logEnds(topic: string): Promise<Map<number, number>> {
  const ends = await admin.fetchTopicOffsets(topic);
  return new Map(ends.map((e) => [e.partition, Number(e.high)]));
}

for (const protocol of ['consumer', 'classic'] as const) {
  describe(`our consumer in a group, ${protocol} protocol`, () => {
    it('splits, rebalances incrementally when a member joins, consumes exactly once, commits to the log end', { timeout: 40_000 }, async () => {
      const topic = `cc-group-${protocol}`;
      const groupId = `cc-g-${protocol}`;
      const tag = `g-${protocol}`;
      await createTopic(topic, 6);
      await sendRange(producer, topic, tag, 0, 600, { batch: 100 });
      const w = new GroupWatch();
      const a = w.member('a', topic, groupId, protocol);
      const b = w.member('b', topic, groupId, protocol);
      await waitFor('a and b to split 6 partitions', () => a.owned.size + b.owned.size === 6 && a.owned.size > 0 && b.owned.size > 0, 15_000);
      assert.equal(a.consumer.protocol, protocol);
      await waitFor('the first 600 records', () => w.consumed.size >= 600, 10_000);
      w.staying.add('a');
      w.staying.add('b');
      const c = w.member('c', topic, groupId, protocol);
      const producing = sendRange(producer, topic, tag, 600, 1200, { batch: 50 });
      await waitFor('a 2/2/2 split', () => a.owned.size === 2 && b.owned.size === 2 && c.owned.size === 2, 15_000);
      await producing;
      const ends = await logEnds(topic);
      const total = [...ends.values()].reduce((x, y) => x + y, 0);
      assert.equal(total, 1200);
      await waitFor('all 1200 records', () => w.consumed.size >= total, 10_000);
      w.staying.clear();
      for (const m of [a, b, c]) await w.close(m);
      assert.deepEqual(w.violations, []);
      assert.equal(w.lost, 0, 'no partitions lost');
      const repeats = [...w.consumed].filter(([, n]) => n !== 1);
      assert.deepEqual(repeats, [], 'every record consumed exactly once');
      const reader = consumer({ groupId });
      const partitions = [0, 1, 2, 3, 4, 5].map((partition) => ({ topic, partition }));
      const committed = await reader.committed(partitions);
      assert.deepEqual(committed.map((x) => x?.offset), partitions.map((p) => ends.get(p.partition)));
      await reader.close();
    });

    it('hands the committed offset and metadata of the previous owner to the next one', { timeout: 20_000 }, async () => {
      const topic = `cc-meta-${protocol}`;
      const groupId = `cc-meta-${protocol}`;
      await createTopic(topic, 3);
      const first = consumer({ groupId, groupProtocol: protocol, heartbeatIntervalMs: 300, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000 });
      await first.subscribe([topic]);
      await waitFor('the first member to own all 3', () => first.assignment().length === 3, 10_000);
      await first.commit(first.assignment().map((p) => ({ ...p, offset: 10 + p.partition, metadata: `run-${p.partition}` })));
      await first.close();
      let seen: readonly AssignedPartition[] = [];
      const second = consumer({
        groupId, groupProtocol: protocol, heartbeatIntervalMs: 300, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000,
        listener: { onAssigned: (ps) => { seen = [...seen, ...ps]; } },
      });
      await second.subscribe([topic]);
      await waitFor('the second member to own all 3', () => seen.length === 3, 10_000);
      const byPartition = [...seen].sort((x, y) => x.partition - y.partition);
      assert.deepEqual(byPartition.map((p) => p.committed), [0, 1, 2].map((p) => ({ offset: 10 + p, metadata: `run-${p}` })));
      assert.equal(second.position({ topic, partition: 1 }), 11, 'fetching starts at the committed offset');
      await second.close();
    });
  });
}
