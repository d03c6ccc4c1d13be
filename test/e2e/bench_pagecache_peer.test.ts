// The bench's page-cache peer (bench/peers.ts), the floor a broker's kernel time per message is read
// against: one cold run (3 GiB in 1 MiB writes after a rest) and one warm run (1 GiB right after
// it) give the CPU per KiB of the cold run's first GiB, of its later GiBs, and of the warm run.
// Needs the shared peers dir (the peers' work dir is built from it); skips otherwise. Bounds: one
// 8 s rest and 4 GiB written to the bench's temp dir, each run killed after 120 s; about 15 s here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { runPeers } from '../../bench/peers.js';

const PEERS_DIR = '/work/shared/peers';

describe('bench peers: page-cache write', { skip: existsSync(PEERS_DIR) ? false : `${PEERS_DIR} not found` }, () => {
  it('gives the first GiB, the later GiBs and a warm GiB their own CPU per KiB', async () => {
    const out = await runPeers({
      peersDir: PEERS_DIR, runs: 1, shards: undefined, quietWaitS: 0, rdkafkaMessages: 0, rdkafkaWarmupBytes: 0, only: ['pagecache'],
    }, () => {});
    const log = out.log.join('\n');
    assert.deepEqual(out.unavailable, []);
    for (const name of ['pagecache-write-cold', 'pagecache-write-sustained', 'pagecache-write-warm']) {
      const f = out.figures.find((x) => x.name === name);
      // One copy of a KiB costs ~0.1-3 µs here; under 0.01 µs or over 1 ms would be a unit slip.
      assert.ok(f !== undefined && f.unit === 'CPU µs/KiB' && f.value.n === 1 && f.value.median > 0.01 && f.value.median < 1000,
        `${name}: ${JSON.stringify(f)} in ${log}`);
    }
    assert.match(log, /^page-cache write run 1: cold [\d.]+, sustained [\d.]+, warm [\d.]+ CPU µs\/KiB$/m);
  });
});
