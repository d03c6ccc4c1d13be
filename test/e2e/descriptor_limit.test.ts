// A broker under a low descriptor limit (prlimit --nofile=1024): topics are created until the
// budget refuses one with POLICY_VIOLATION and a message (not a closed connection), the health
// endpoint and deletes keep working, the process stays below its limit, sealed segments do not
// pin descriptors, every log closes cleanly with the budget full, the broker restarts on the same
// data dir, and connections beyond the budget are refused with a metric and a log line while
// /v1/health still answers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { KafkaAdmin } from '../../src/client/admin.js';
import { ApiVersionsApi } from '../../src/protocol/apis/api_versions.js';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';
import { BrokerProcess } from '../helpers/broker_process.js';
import { RawConn, converse, requestFrame } from '../helpers/raw_socket.js';

const NOFILE = 1024;
const PER_TOPIC = 50;

const openFds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

describe('descriptor limit (prlimit --nofile=1024)', () => {
  let broker: BrokerProcess;
  let admin: KafkaAdmin;

  before(async () => {
    broker = await BrokerProcess.start({ nofile: NOFILE, args: ['--auto-create-topics=false'], logLevel: 'info' });
    admin = await KafkaAdmin.connect({ host: broker.host, port: broker.kafkaPort, clientId: 'fds-test' });
  });

  after(async () => {
    await admin?.close();
    await broker?.dispose();
  });

  interface Health {
    status: string;
    descriptors: { limit: number; partitions: number; connections: number };
  }

  async function health(): Promise<Health> {
    const res = await fetch(`http://${broker.host}:${broker.adminPort}/v1/health`);
    assert.equal(res.status, 200);
    return (await res.json()) as Health;
  }

  it('refuses the topic that would cross the budget with POLICY_VIOLATION and a message; health and deletes still work', async () => {
    assert.equal((await health()).descriptors.limit, NOFILE);
    let created = 0;
    let refusal: unknown = null;
    for (let i = 0; i < 40 && refusal === null; i++) {
      try {
        await admin.createTopics(`t${i}`, PER_TOPIC, 1);
        created++;
      } catch (err) {
        refusal = err;
      }
    }
    assert.ok(created > 0, 'no topic fitted at all');
    assert.ok(refusal instanceof KafkaError, `expected a Kafka error, got ${String(refusal)}`);
    assert.equal(refusal.code, ErrorCode.POLICY_VIOLATION);
    assert.match(refusal.message, /file descriptor budget exhausted: 50 more partitions need 50 descriptors, \d+ of \d+ are free \(limit 1024/);
    assert.ok(openFds(broker.pid) < NOFILE, `${openFds(broker.pid)} descriptors open`);
    assert.equal((await health()).status, 'ready');
    await admin.deleteTopics(['t0']);
    await admin.createTopics('again', PER_TOPIC, 1);
    assert.equal((await health()).descriptors.partitions, (await admin.listTopics()).reduce((n, t) => n + t.partitions, 0));
  });

  it('closes every log cleanly with the budget full, and restarts on the data dir it filled, below the limit', async () => {
    await admin.close();
    assert.equal((await broker.stop()).code, 0);
    // Each clean close stages a few files: with partitions holding the budget, closing 64 logs per shard at once met EMFILE.
    const failedCloses = readFileSync(broker.logPath, 'utf8').split('\n').filter((l) => l.includes('clean close failed'));
    assert.deepEqual(failedCloses, [], 'no log fell back to a rescan');
    await broker.restart();
    admin = await KafkaAdmin.connect({ host: broker.host, port: broker.kafkaPort, clientId: 'fds-test' });
    assert.ok((await admin.listTopics()).some((t) => t.name === 'again'));
    assert.ok(openFds(broker.pid) < NOFILE);
    await assert.rejects(admin.createTopics('over', PER_TOPIC, 1), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.POLICY_VIOLATION);
  });

  it('refuses connections beyond the budget with a metric and a log line; /v1/health still answers', async () => {
    const free = Math.floor((NOFILE - openFds(broker.pid)) / 2);
    const held: RawConn[] = [];
    try {
      for (let i = 0; i < free + 20; i++) held.push(await RawConn.open(broker.kafkaPort));
      const rejected = await broker.waitMetric('sluice_connections_rejected_total{reason="descriptors"}', (v) => v > 0);
      assert.ok(rejected > 0);
      assert.equal((await health()).status, 'ready');
      assert.ok(openFds(broker.pid) < NOFILE, `${openFds(broker.pid)} descriptors open`);
      assert.match(readFileSync(broker.logPath, 'utf8'), /connections refused: the file descriptor budget is exhausted/);
      assert.ok((await health()).descriptors.connections > 0);
    } finally {
      for (const c of held) c.destroy();
    }
    // Slots come back once clients leave.
    const deadline = Date.now() + 5000;
    for (;;) {
      const out = await converse(broker.kafkaPort, [requestFrame(ApiVersionsApi, 0, 1, {})], { frames: 1, timeoutMs: 1000, quietMs: 20 });
      if (out.frames.length === 1) break;
      assert.ok(Date.now() < deadline, 'slots were not released after clients closed');
    }
  });
});
