// The `sluice` command line against a running broker process: topic create/list/describe/delete
// over the Kafka protocol (exit codes, JSON output, error names), and `config print --effective`
// showing each setting's value and source.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerProcess } from '../helpers/broker_process.js';
import { sluice } from '../helpers/cli_run.js';

let broker: BrokerProcess;
let brokers: string[];

before(async () => {
  broker = await BrokerProcess.start();
  brokers = ['--brokers', broker.bootstrap];
});

after(async () => {
  await broker.dispose();
});

describe('sluice topic', () => {
  it('creates a topic with partitions and a config override, and refuses a duplicate', async () => {
    const created = await sluice(['topic', 'create', 'cli-orders', '--partitions', '3', '--config', 'retention.ms=3600000', ...brokers]);
    assert.equal(created.code, 0, created.stderr);
    const again = await sluice(['topic', 'create', 'cli-orders', ...brokers]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /TOPIC_ALREADY_EXISTS/);
  });

  it('lists and describes it as JSON, with its partitions and the override', async () => {
    const list = await sluice(['topic', 'list', '--format', 'json', ...brokers]);
    assert.equal(list.code, 0, list.stderr);
    const topics = JSON.parse(list.stdout) as Array<{ name: string; partitions: number; topicId: string }>;
    const mine = topics.find((t) => t.name === 'cli-orders');
    assert.ok(mine, list.stdout);
    assert.equal(mine.partitions, 3);
    assert.match(mine.topicId, /^[0-9a-f]{32}$/);
    assert.notEqual(mine.topicId, '0'.repeat(32));

    const described = await sluice(['topic', 'describe', 'cli-orders', '--format', 'json', ...brokers]);
    assert.equal(described.code, 0, described.stderr);
    const d = JSON.parse(described.stdout) as {
      partitionDetails: Array<{ partition: number; leader: number }>;
      configs: Array<{ name: string; value: string | null }> | null;
    };
    assert.deepEqual(d.partitionDetails.map((p) => p.partition), [0, 1, 2]);
    assert.ok(d.partitionDetails.every((p) => p.leader === 0));
    assert.equal(d.configs?.find((c) => c.name === 'retention.ms')?.value, '3600000');
  });

  it('rejects an invalid name and an unsupported config with their Kafka error names', async () => {
    const badName = await sluice(['topic', 'create', 'bad/name', ...brokers]);
    assert.equal(badName.code, 1);
    assert.match(badName.stderr, /INVALID_TOPIC_EXCEPTION/);
    const badConfig = await sluice(['topic', 'create', 'cli-compact', '--config', 'cleanup.policy=compact', ...brokers]);
    assert.equal(badConfig.code, 1);
    assert.match(badConfig.stderr, /INVALID_CONFIG/);
  });

  it('deletes it; describing it afterwards fails with UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const deleted = await sluice(['topic', 'delete', 'cli-orders', ...brokers]);
    assert.equal(deleted.code, 0, deleted.stderr);
    const gone = await sluice(['topic', 'describe', 'cli-orders', ...brokers]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /UNKNOWN_TOPIC_OR_PARTITION/);
  });
});

describe('sluice config print --effective', () => {
  it('shows each value with the source it came from', async () => {
    const out = await sluice(['config', 'print', '--effective', '--format', 'json', '--shards', '3'], { SLUICE_FLUSH: '25' });
    assert.equal(out.code, 0, out.stderr);
    const byKey = JSON.parse(out.stdout) as Record<string, { value: unknown; source: string }>;
    assert.deepEqual(byKey['shards'], { value: 3, source: 'flag' });
    assert.equal(byKey['flush']?.source, 'env');
    assert.equal(byKey['data-dir']?.source, 'default');
  });
});
