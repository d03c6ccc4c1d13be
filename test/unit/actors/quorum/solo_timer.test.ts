// A lone voter's quorum leader sleeps while nothing is timed (issue 16: an idle single node's
// wake-ups): its timer waits for the state machine's next timed work, not 100 ms at a time, and
// still runs that work on time, also when the work comes nearer while it sleeps. Raft time keeps
// pace with the clock across the sleeps (the core is given every tick it missed).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { QuorumDriver, type QuorumLink } from '../../../../src/actors/quorum/quorum_driver.js';
import { createLogger } from '../../../../src/common/logger.js';
import type { Entry, Snapshot } from '../../../../src/coordinator/raft/types.js';
import { sleep, waitFor } from './quorum_fixture.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const NO_NETWORK: QuorumLink = {
  send: () => undefined,
  receive: () => Promise.reject(new Error('no network in this test')),
  learnPeers: () => undefined,
  close: () => undefined,
};

/** A lone voter whose onTick calls are recorded (wall clock) and whose next timed work the test sets. */
function soloDriver(): { driver: QuorumDriver; ticks: number[]; setWork: (at: number) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-solo-'));
  dirs.push(dir);
  const ticks: number[] = [];
  let work = Infinity;
  const driver = new QuorumDriver({
    id: 1, dir, bootstrapVoters: [1],
    stateMachine: { restore: (_s: Snapshot) => undefined, apply: (_e: readonly Entry[]) => undefined, snapshot: () => new Uint8Array() },
    transport: () => NO_NETWORK,
    log: createLogger('silent'),
    onFatal: (err) => assert.fail(String(err)),
    onTick: (now) => ticks.push(now),
    nextTimedWork: () => work,
    electionTimeoutTicks: 5,
  });
  return { driver, ticks, setWork: (at) => (work = at) };
}

describe('QuorumDriver: a lone voter', () => {
  it('sleeps while nothing is timed, and wakes for timed work on time, also for work that came nearer meanwhile', async () => {
    const { driver, ticks, setWork } = soloDriver();
    try {
      await waitFor('leadership', () => (driver.isLeader ? true : undefined));
      await sleep(300); // the election's own ticks and the first Ready are behind us
      const quietFrom = ticks.length;
      await sleep(1500);
      // At the old fixed 100 ms period: ~15 wake-ups in this window.
      assert.ok(ticks.length - quietFrom <= 1, `${ticks.length - quietFrom} ticks in 1.5 s with nothing timed`);

      // Work 400 ms out, announced while the timer sleeps toward its 5 s cap.
      const due = Date.now() + 400;
      setWork(due);
      driver.timedWorkChanged();
      await waitFor('the timed work', () => (ticks.some((t) => t >= due) ? true : undefined), 3000);
      const ran = ticks.find((t) => t >= due)!;
      assert.ok(ran - due < 150, `ran ${ran - due} ms after it was due`);
      setWork(Infinity);
    } finally {
      await driver.stop();
    }
  });

  it('gives the core every tick it slept through: Raft time keeps pace with the clock', async () => {
    const { driver, setWork } = soloDriver();
    /** Wakes the sleeping timer (work due now), lets it tick, and reads the core's clock (its own replica's last fetch tick). */
    const wakeAndRead = async (): Promise<{ tick: number; at: number }> => {
      setWork(Date.now());
      driver.timedWorkChanged();
      await sleep(250); // due work keeps the timer at 100 ms: the read is at most one timer stale
      const read = { tick: driver.status().replicas.find((r) => r.id === 1)!.lastFetchTick, at: Date.now() };
      setWork(Infinity);
      return read;
    };
    try {
      await waitFor('leadership', () => (driver.isLeader ? true : undefined));
      const first = await wakeAndRead();
      await sleep(1500); // asleep: no ticks given meanwhile
      const second = await wakeAndRead();
      // Catching up at most 20 ticks (200 ms) per timer, as before the long sleeps, would be ~1.3 s short.
      const raftMs = (second.tick - first.tick) * 10;
      const wallMs = second.at - first.at;
      assert.ok(Math.abs(raftMs - wallMs) <= 150, `Raft time advanced ${raftMs} ms in ${wallMs} ms`);
    } finally {
      await driver.stop();
    }
  });
});
