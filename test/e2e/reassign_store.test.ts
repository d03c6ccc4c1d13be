// The reassignment store against a real broker: a record larger than one message (a rollback
// snapshot of 200k partitions) is written in parts and read back whole; parts interleaved with
// another writer's records, split across the reader's windows, or of a newer record than a whole
// one, all join correctly; a group missing a part is never taken for a record.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerProcess } from '../helpers/broker_process.js';
import { withAdmin } from '../helpers/three_brokers.js';
import { ReassignStore, REASSIGN_TOPIC, isStarted, isStatus } from '../../src/cli/reassign_store.js';
import type { StoreRecord } from '../../src/cli/reassign_store.js';
import { Producer } from '../../src/client/producer/producer.js';

let broker: BrokerProcess;

before(async () => {
  broker = await BrokerProcess.start({ args: ['--num-partitions', '1'] });
});

after(async () => {
  await broker?.dispose();
});

type Started = Extract<StoreRecord, { kind: 'started' }>;

function started(planId: string, partitions: number): Started {
  const assignment = Array.from({ length: partitions }, (_, i) => ({ topic: `topic-${i % 97}`, partition: i, replicas: [i % 5, (i + 1) % 5, (i + 2) % 5] }));
  return { kind: 'started', planId, at: 1, snapshot: { assignment, configs: [] }, baseline: { produceP99Ms: 1, fetchP99Ms: 2, consumerLag: 3 } };
}

function command(n: number): StoreRecord {
  return { kind: 'command', planId: `other-${n}`, command: 'pause', id: String(n), at: n };
}

async function withStore<T>(run: (store: ReassignStore) => Promise<T>): Promise<T> {
  const store = await withAdmin(broker, (admin) => ReassignStore.open(admin, [broker.bootstrap]));
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

const startedOf = (planId: string) => (r: StoreRecord): r is Started => isStarted(r) && r.planId === planId;

describe('reassignment store: records in parts', () => {
  it('writes a 200k-partition snapshot (over one message) in parts and reads it back whole', { timeout: 120_000 }, async () => {
    const big = started('big', 200_000);
    assert.ok(Buffer.byteLength(JSON.stringify(big)) > 8 * 1024 ** 2, 'larger than the topic\'s message size');
    await withStore(async (store) => {
      await store.append(big);
      assert.deepEqual(await store.latest(startedOf('big')), big);
    });
  });

  it('joins parts interleaved with another writer\'s records and split across read windows; the newest record wins', { timeout: 120_000 }, async () => {
    await withStore(async (store) => {
      await withStore(async (other) => {
        await store.append(started('old', 20), 1 << 20);
        const newer = started('new', 300);
        // ~30 parts of 512 bytes while another writer appends between them.
        const writing = store.append(newer, 512);
        for (let n = 0; n < 20; n++) await other.append(command(n));
        await writing;
        // More records than the reader's first window after the last part: the parts span windows.
        for (let n = 20; n < 100; n++) await other.append(command(n));
        const latestStarted = await store.latest(isStarted);
        assert.deepEqual(latestStarted, newer);
        assert.deepEqual(await store.latest(startedOf('old')), started('old', 20));
        assert.equal(await store.latest(isStatus), null);
      });
    });
  });

  it('places a record in parts at its last part: it beats a whole record written between its parts', { timeout: 60_000 }, async () => {
    await withStore(async (store) => {
      const parted = started('parted', 3);
      const text = Buffer.from(JSON.stringify(parted));
      const third = Math.ceil(text.length / 3);
      const producer = new Producer({ brokers: [broker.bootstrap], acks: 'all' });
      await producer.connect();
      try {
        await producer.send(REASSIGN_TOPIC, { key: 'part:mid001:0:3', value: text.subarray(0, third), partition: 0 });
        await producer.send(REASSIGN_TOPIC, { key: 'part:mid001:1:3', value: text.subarray(third, 2 * third), partition: 0 });
        await store.append(started('between', 3));
        await producer.send(REASSIGN_TOPIC, { key: 'part:mid001:2:3', value: text.subarray(2 * third), partition: 0 });
      } finally {
        await producer.close();
      }
      // The reader's first window (64 records) then holds the whole record and only the last part.
      for (let n = 0; n < 62; n++) await store.append(command(n));
      assert.deepEqual(await store.latest(isStarted), parted);
    });
  });

  it('never takes a group missing a part for a record', { timeout: 60_000 }, async () => {
    await withStore(async (store) => {
      const whole = started('whole', 10);
      await store.append(whole);
      const text = Buffer.from(JSON.stringify(started('whole', 5)));
      const producer = new Producer({ brokers: [broker.bootstrap], acks: 'all' });
      await producer.connect();
      try {
        // Parts 0 and 2 of 3, as a writer that died midway (or retention) leaves them.
        await producer.send(REASSIGN_TOPIC, { key: 'part:dead01:0:3', value: text.subarray(0, 10), partition: 0 });
        await producer.send(REASSIGN_TOPIC, { key: 'part:dead01:2:3', value: text.subarray(20), partition: 0 });
      } finally {
        await producer.close();
      }
      assert.deepEqual(await store.latest(startedOf('whole')), whole);
    });
  });
});
