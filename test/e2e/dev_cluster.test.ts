// `sluice dev cluster` end to end through the compiled CLI: up starts three nodes that elect one
// leader, status shows it on every node, add starts a broker-only observer, down stops all, and up
// again restarts every node on the same ports with its data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeStatus } from '../../src/cli/dev_cluster.js';
import { sluice } from '../helpers/cli_run.js';
import { sleep } from '../helpers/broker_process.js';
import { CLUSTER_UNAVAILABLE } from '../cluster/process_cluster.js';

/** Polls `status --format json` until `ok` holds (bounded); returns the last statuses. */
async function statusUntil(dir: string, ok: (s: NodeStatus[]) => boolean, timeoutMs = 20_000): Promise<NodeStatus[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await sluice(['dev', 'cluster', 'status', '--dir', dir, '--format', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const statuses = JSON.parse(r.stdout) as NodeStatus[];
    if (ok(statuses) || Date.now() >= deadline) return statuses;
    await sleep(200);
  }
}

const agreed = (n: number) => (s: NodeStatus[]): boolean =>
  s.length === n && s.every((x) => x.running && x.health === 'ready' && x.quorum !== null && x.quorum.leaderId === s[0]?.quorum?.leaderId && x.quorum.leaderId > 0)
  && s.filter((x) => x.quorum?.role === 'leader').length === 1;

test('dev cluster up, status, add, down and up again', { skip: CLUSTER_UNAVAILABLE, timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-devcluster-'));
  let passed = false;
  t.after(async () => {
    await sluice(['dev', 'cluster', 'down', '--dir', dir]);
    if (passed) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`# dev cluster kept at ${dir}\n`);
  });
  const up = await sluice(['dev', 'cluster', 'up', '--dir', dir, '--', '--shards', '1']);
  assert.equal(up.code, 0, up.stderr);
  const bootstrap = up.stdout.trim();
  assert.match(bootstrap, /^127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
  const first = await statusUntil(dir, agreed(3));
  assert.ok(agreed(3)(first), JSON.stringify(first));
  assert.deepEqual(first.map((s) => s.roles), ['broker,controller', 'broker,controller', 'broker,controller']);

  const add = await sluice(['dev', 'cluster', 'add', '--dir', dir]);
  assert.equal(add.code, 0, add.stderr);
  assert.ok(add.stdout.trim().startsWith(`${bootstrap},127.0.0.1:`), add.stdout);
  const grown = await statusUntil(dir, (s) => agreed(4)(s) && s[3]?.quorum?.role === 'observer');
  assert.equal(grown[3]?.roles, 'broker');
  assert.equal(grown[3]?.quorum?.role, 'observer', JSON.stringify(grown));

  // A node that died (not stopped through `down`) is restarted by the next `up`.
  const victim = grown[1]?.pid;
  assert.ok(typeof victim === 'number');
  process.kill(victim, 'SIGKILL');
  await statusUntil(dir, (s) => s[1]?.running === false, 10_000);
  const revive = await sluice(['dev', 'cluster', 'up', '--dir', dir]);
  assert.equal(revive.code, 0, revive.stderr);
  assert.match(revive.stderr, /node 2 ready/);
  const revived = await statusUntil(dir, agreed(4));
  assert.ok(agreed(4)(revived) && revived[1]?.pid !== victim, JSON.stringify(revived));

  const down = await sluice(['dev', 'cluster', 'down', '--dir', dir]);
  assert.equal(down.code, 0, down.stderr);
  const stopped = await statusUntil(dir, (s) => s.every((x) => !x.running), 1);
  assert.ok(stopped.every((x) => !x.running && x.health === 'down'));

  const again = await sluice(['dev', 'cluster', 'up', '--dir', dir]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout.trim(), add.stdout.trim(), 'the same nodes on the same ports');
  const back = await statusUntil(dir, agreed(4));
  assert.ok(agreed(4)(back), JSON.stringify(back));
  const idle = await sluice(['dev', 'cluster', 'up', '--dir', dir]);
  assert.match(idle.stderr, /node 1 already running/);
  const conflict = await sluice(['dev', 'cluster', 'up', '5', '--dir', dir]);
  assert.equal(conflict.code, 2);
  assert.match(conflict.stderr, /has 3 voters; the voter set is fixed/);
  passed = true;
});
