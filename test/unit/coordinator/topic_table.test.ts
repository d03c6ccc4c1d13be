// The topic table applies changes at once and resolves them only once the file is durable; writes
// issued back to back leave the file with the latest table.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TopicTable } from '../../../src/coordinator/topic_table.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';

describe('TopicTable', () => {
  it('persists every change before resolving, in order, and refuses a duplicate at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-topics-'));
    try {
      const table = TopicTable.load(dir);
      const creates = Array.from({ length: 20 }, (_, i) => table.create(`t${i}`, i + 1, { 'retention.ms': String(i) }));
      await assert.rejects(table.create('t3', 1, {}), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS);
      const deleting = table.delete('t0');
      const growing = table.setPartitionCount('t1', 9);
      await Promise.all([...creates, deleting, growing]);
      const reloaded = TopicTable.load(dir);
      assert.equal(reloaded.size, 19);
      assert.equal(reloaded.get('t0'), undefined);
      assert.equal(reloaded.get('t1')?.partitions, 9);
      assert.deepEqual(reloaded.get('t19')?.configs, { 'retention.ms': '19' });
      assert.equal(reloaded.get('t5')?.id, table.get('t5')?.id);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
