// The bench's fio peer (bench/peers.ts), the durable target's disk figure measured in the sitting:
// one warm-up run and one measured run of 2 GiB in 1 MiB writes with an fdatasync after each, on
// the file system the brokers' data dirs are on, give a write rate in MB/s. Needs fio and the
// shared peers dir; skips with the reason otherwise. Bounds: two fio runs of 2 GiB, each capped
// at 20 s by fio and killed after 120 s; about 8-15 s here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { FIO_FIGURE, runPeers } from '../../bench/peers.js';
import { onPath } from '../../src/bench/peer_servers.js';

const PEERS_DIR = '/work/shared/peers';
const missing = !existsSync(PEERS_DIR) ? `${PEERS_DIR} not found` : !onPath('fio') ? 'fio not installed' : false;

describe('bench peers: fio', { skip: missing }, () => {
  it('measures 1 MiB writes with an fdatasync each, after an unmeasured warm-up', async () => {
    const out = await runPeers({
      peersDir: PEERS_DIR, runs: 1, shards: undefined, quietWaitS: 0, rdkafkaMessages: 0, rdkafkaWarmupBytes: 0, only: ['fio'],
    }, () => {});
    assert.deepEqual(out.unavailable, []);
    const fio = out.figures.find((f) => f.name === FIO_FIGURE);
    // A disk that syncs 1 MiB writes at under 1 MB/s or over 100 GB/s would be a unit slip, not a disk.
    assert.ok(fio !== undefined && fio.value.n === 1 && fio.value.median > 1 && fio.value.median < 100_000,
      `${JSON.stringify(fio)} in ${out.log.join('\n')}`);
    assert.deepEqual(out.log.map((l) => /^fio 1 MiB \+ fdatasync (warm-up|run 1):/.exec(l)?.[1]), ['warm-up', 'run 1'], out.log.join('\n'));
  });
});
