// DescribeLogDirs with plain-object dependencies: which partitions a request gets back (all,
// only the named ones held here), their sizes and lags as the shards report them, the data dir's
// space, and a shard failure answered as the dir's error rather than a closed connection.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PartitionSnapshot } from '../../../../src/actors/shard_snapshot.js';
import { diskSpaceOf } from '../../../../src/common/disk_space.js';
import { describeLogDirsHandler, type DescribeLogDirsDeps } from '../../../../src/net/handlers/describe_log_dirs.js';
import type { DescribeLogDirsRequest } from '../../../../src/protocol/apis/describe_log_dirs.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { answered, requestContext } from '../../../helpers/handler_context.js';

function part(topic: string, partition: number, sizeBytes: number, logEndOffset = 10, highWatermark = logEndOffset): PartitionSnapshot {
  return { topic, partition, sizeBytes, logStartOffset: 0, logEndOffset, highWatermark };
}

// As two shards would report them: interleaved topics, partitions out of order.
const held = [part('orders', 2, 3000), part('audit', 0, 70), part('orders', 0, 1000), part('__consumer_offsets', 7, 512)];

function deps(partitions: () => Promise<readonly PartitionSnapshot[]> = () => Promise.resolve(held)): DescribeLogDirsDeps {
  return { logDirs: { path: '/srv/sluice', partitions, space: () => Promise.resolve({ totalBytes: 1000, usableBytes: 400 }) } };
}

async function ask(req: DescribeLogDirsRequest, d = deps(), version = 4) {
  return answered(await describeLogDirsHandler.handle(requestContext(35, version), req, d));
}

/** [topic, partition, size] of every partition in the only result. */
function listed(res: Awaited<ReturnType<typeof ask>>): [string, number, number][] {
  assert.equal(res.results?.length, 1, 'one log dir');
  return (res.results?.[0]?.topics ?? []).flatMap((t) => (t.partitions ?? []).map((p): [string, number, number] => [t.name!, p.partitionIndex!, p.partitionSize!]));
}

describe('DescribeLogDirs handler', () => {
  it('null topics: every partition held, grouped by topic in name order, with its size, lag 0 and not future', async () => {
    const res = await ask({ topics: null });
    assert.equal(res.errorCode, ErrorCode.NONE);
    const dir = res.results?.[0];
    assert.equal(dir?.errorCode, ErrorCode.NONE);
    assert.equal(dir?.logDir, '/srv/sluice');
    assert.deepEqual([dir?.totalBytes, dir?.usableBytes], [1000, 400]);
    assert.deepEqual(listed(res), [['__consumer_offsets', 7, 512], ['audit', 0, 70], ['orders', 0, 1000], ['orders', 2, 3000]]);
    for (const t of dir?.topics ?? []) for (const p of t.partitions ?? []) assert.deepEqual([p.offsetLag, p.isFutureKey], [0, false]);
  });

  it('named topics: only those partitions held here; unknown topics and partitions are left out', async () => {
    const res = await ask({ topics: [
      { topic: 'orders', partitions: [2, 1, 2] },
      { topic: 'nope', partitions: [0] },
      { topic: 'audit', partitions: [5] },
    ] });
    assert.deepEqual(listed(res), [['orders', 2, 3000]]);
    assert.deepEqual(listed(await ask({ topics: [] })), [], 'an empty list asks for nothing');
  });

  it('a replica behind the high watermark reports the gap as its lag; one ahead of it reports 0', async () => {
    const res = await ask({ topics: null }, deps(() => Promise.resolve([part('t', 0, 10, 40, 55), part('t', 1, 10, 60, 55)])));
    assert.deepEqual(res.results?.[0]?.topics?.[0]?.partitions?.map((p) => p.offsetLag), [15, 0]);
  });

  it('a shard that cannot answer fails the dir with an error code, not the request', async () => {
    const res = await ask({ topics: null }, deps(() => Promise.reject(new Error('worker gone'))));
    assert.equal(res.results?.[0]?.errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
    assert.deepEqual(res.results?.[0]?.topics, []);
  });

  it('the data dir space comes from statfs; an unreadable dir is unknown (-1), not a failure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-logdirs-'));
    try {
      const space = await diskSpaceOf(dir);
      assert.ok(space.totalBytes > 0 && space.usableBytes >= 0 && space.usableBytes <= space.totalBytes, JSON.stringify(space));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.deepEqual(await diskSpaceOf(dir), { totalBytes: -1, usableBytes: -1 });
  });
});
