// The bench's librdkafka end-to-end latency peer (bench/peers.ts) against a real broker: the shared
// C tool compiles, runs a paced linger-0 producer and a consumer through a fresh `--flush always`
// broker with acks=all, and its answer is read as every record sent received, with ordered
// percentiles; a run whose consumer misses records is an error. Needs librdkafka-dev, cc and the
// shared peers dir; skips with the reason otherwise. Bounds: 2 s of 2,000 msgs/s, about 10 s.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRdkafkaE2e, runRdkafkaE2e } from '../../bench/peers.js';
import { BrokerProcess } from '../../src/bench/broker_process.js';

const PEERS_DIR = '/work/shared/peers';
const work = mkdtempSync(join(tmpdir(), 'sluice-rdkafka-e2e-'));
const missing = !existsSync(join(PEERS_DIR, 'rdkafka-e2e-latency.c'))
  ? `${PEERS_DIR}/rdkafka-e2e-latency.c not found`
  : !existsSync('/usr/include/librdkafka/rdkafka.h') ? 'librdkafka-dev not installed' : false;

describe('bench peer: librdkafka end-to-end latency', { skip: missing }, () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  it('measures every record through a --flush always broker at acks=all', async () => {
    const built = await buildRdkafkaE2e(PEERS_DIR, work);
    assert.ok(!('error' in built), 'error' in built ? built.error : '');
    const broker = await BrokerProcess.start({ flush: 'always' });
    try {
      const r = await runRdkafkaE2e(built.bin, `${broker.host}:${broker.kafkaPort}`, 'e2e-peer', 2000, 2, 'all');
      assert.ok(!('error' in r), 'error' in r ? r.error : '');
      // Paced for 2 s after the warm-up second: 4,000 records, give or take the last one due.
      assert.ok(Math.abs(r.sent - 4000) <= 2, `sent ${r.sent}`);
      assert.equal(r.received, r.sent);
      assert.ok(r.p50_ms > 0 && r.p50_ms <= r.p99_ms && r.p99_ms <= r.p999_ms && r.p999_ms <= r.max_ms, JSON.stringify(r));
    } finally {
      await broker.stop();
    }
  });
});
