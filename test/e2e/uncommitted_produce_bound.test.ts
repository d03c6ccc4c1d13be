// A shard holds produced batches until their group commit settles, at most
// --max-uncommitted-produce-bytes of them; past it the shard takes no more produces until commits
// settle, and the producer is held back rather than failed. With the bound at its 64 KiB minimum,
// below one of the ~1 MB produce requests librdkafka (kcat) pipelines, and every commit
// fdatasync'ed, any request that arrives while an earlier one's commit runs finds the bound
// reached (with a 1 MiB bound it took two, and a CI run had none). Every message must still be
// acknowledged and read back once, in order, the broker must report that produces waited, and it
// must never have held more than the bound and one request. On connections placed on a shard (a
// same-thread lane: its port reports blocked) and on connections main reads (a ring lane: the
// drain stops at the produce).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerProcess, sleep } from '../helpers/broker_process.js';
import { consumeArgs, kcat, kcatInput, parseKcatOutput, produceArgs } from '../helpers/kcat.js';

const TOPIC = 'uncommitted-bound';
const BOUND = 64 << 10;
/** librdkafka's largest produce batch here (batch.size). */
const BATCH_BYTES = 1_000_000;
const MESSAGES = 3000;
const VALUE_BYTES = 8 * 1024;

/** Message i's value: its index, then filler without kcat's delimiters. */
function value(i: number): Buffer {
  const v = Buffer.alloc(VALUE_BYTES, 0x61 + (i % 26));
  v.write(`${String(i).padStart(8, '0')}:`, 0, 'latin1');
  return v;
}

const SETUPS = [
  { name: 'placed on a shard', placement: 'shards' },
  { name: 'read by main', placement: 'main' },
] as const;

for (const setup of SETUPS) describe(`produces past the uncommitted-bytes bound (${setup.name})`, () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await BrokerProcess.start({
      shards: 1,
      flush: 'always',
      args: ['--connection-placement', setup.placement, '--max-uncommitted-produce-bytes', String(BOUND), '--num-partitions', '1'],
    });
  });

  after(async () => {
    await broker?.stop();
  });

  it('holds the producer back while commits settle, and every message is acknowledged and stored once, in order', { timeout: 120_000 }, async () => {
    const input = kcatInput(Array.from({ length: MESSAGES }, (_, i) => ({ key: null, value: value(i), headers: [] })));
    // The gauge is the most held since the previous scrape: scraped throughout, its largest reading is the run's.
    let peak = 0;
    let producing = true;
    const scraping = (async () => {
      while (producing) {
        peak = Math.max(peak, await broker.metric('sluice_uncommitted_produce_bytes_max{shard="0"}'));
        await sleep(100);
      }
    })();
    try {
      await kcat(produceArgs(broker.bootstrap, TOPIC, ['-X', 'acks=all', '-X', 'linger.ms=5', '-X', `batch.size=${BATCH_BYTES}`]), { input, timeoutMs: 90_000 });
    } finally {
      producing = false;
      await scraping;
    }
    peak = Math.max(peak, await broker.metric('sluice_uncommitted_produce_bytes_max{shard="0"}'));
    assert.ok(await broker.metric('sluice_uncommitted_produce_waits_total{shard="0"}') > 0, 'produces waited for commits to settle');
    // Past the bound by at most what was under way when it was reached: one batch on a ring lane,
    // the request being served on each placed connection (kcat has one, of one batch).
    assert.ok(peak >= BOUND && peak <= BOUND + BATCH_BYTES, `at most ${peak} bytes held`);
    assert.equal(await broker.metric('sluice_storage_errors_total{shard="0"}'), 0);
    assert.equal(await broker.metric('sluice_uncommitted_produce_bytes_max{shard="0"}'), 0, 'nothing is held once every commit settled');
    const out = await kcat(consumeArgs(broker.bootstrap, TOPIC, 0), { timeoutMs: 60_000 });
    const read: number[] = [];
    parseKcatOutput(out.stdout, (r) => {
      const i = Number(r.value!.toString('latin1', 0, 8));
      assert.ok(r.value!.equals(value(i)), `record at ${r.offset} is whole`);
      read.push(i);
    });
    assert.deepEqual(read, Array.from({ length: MESSAGES }, (_, i) => i), 'every message once, in order');
  });
});
