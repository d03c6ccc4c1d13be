// The expansion simulation at a size a test affords (8 brokers to 10, 600 partitions): the real
// executor completes a sticky plan and a `--generate`-shaped one, lands every partition on its
// target, keeps the simulated p99 under the breach ratio with the dynamic throttle, pauses within
// 10 s of an injected breach and finishes after it clears, and beats a static 10 MB/s throttle by
// at least 3x (research goal 5). Tests only.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SIM_DEFAULTS, ExpansionSim, p99At, simulateExpansion, type SimOptions } from './model.js';
import { naiveReassignment, planReassignment } from '../../../src/cluster/expansion/planner.js';
import { clusterInput } from './plans.js';
import { partitionKey } from './kip455.js';

const input = clusterInput({ brokers: 8, added: 2, partitions: 600, replication: 3, racks: 5, seed: 7, meanSizeBytes: 2e9, meanBytesInPerSec: 2e5 });
const TEST_SIM: SimOptions = { ...SIM_DEFAULTS, maxSimMs: 2 * 24 * 3600 * 1000 };

describe('expansion simulation', () => {
  it('completes the plan, lands every partition on its target and keeps p99 under the breach ratio', () => {
    for (const plan of [planReassignment(input), naiveReassignment(input)]) {
      const sim = new ExpansionSim(input, plan, TEST_SIM);
      const r = sim.run();
      assert.equal(r.state, 'done');
      const final = sim.assignment();
      for (const m of plan.moves) assert.deepEqual(final.get(partitionKey(m.topic, m.partition)), [...m.to]);
      for (const c of plan.leadershipChanges) assert.deepEqual(final.get(partitionKey(c.topic, c.partition)), [...c.to]);
      assert.equal(r.bytesMoved, plan.moves.reduce((sum, m) => sum + m.sizeBytes * m.to.filter((b) => !m.from.includes(b)).length, 0));
    }
    const sticky = simulateExpansion(input, planReassignment(input), TEST_SIM);
    const naive = simulateExpansion(input, naiveReassignment(input), TEST_SIM);
    // The sticky plan leaves leaders where they are, so the throttle alone bounds its impact.
    assert.ok(sticky.maxP99Ratio < SIM_DEFAULTS.executor.breach.produceP99, `p99 reached ${sticky.maxP99Ratio.toFixed(2)}x the baseline`);
    assert.equal(sticky.pauses, 0);
    assert.ok(sticky.bytesMoved * 2 < naive.bytesMoved, `sticky ${sticky.bytesMoved} vs --generate ${naive.bytesMoved} bytes`);
    assert.ok(sticky.simulatedSeconds < naive.simulatedSeconds);
  });

  it('pauses within 10 s of an injected breach and finishes once it clears', () => {
    const options: SimOptions = { ...TEST_SIM, faults: [0, 1, 2].map((broker) => ({ broker, fromMs: 60_000, toMs: 240_000, utilisation: 0.7 })) };
    const r = simulateExpansion(input, planReassignment(input), options);
    assert.equal(r.state, 'done');
    assert.ok(r.pauses >= 1, 'the breach paused the executor');
    assert.ok(r.worstPauseDelayMs <= 10_000, `paused ${r.worstPauseDelayMs} ms after the breach`);
    assert.ok(r.maxP99Ratio >= SIM_DEFAULTS.executor.breach.produceP99);
  });

  it('finishes at least 3x faster with the dynamic throttle than with a static 10 MB/s one', () => {
    const fixed = 10 * 1024 ** 2;
    const staticOptions: SimOptions = { ...TEST_SIM, executor: { ...SIM_DEFAULTS.executor, throttle: { ...SIM_DEFAULTS.executor.throttle, minBytesPerSec: fixed, maxBytesPerSec: fixed, initialBytesPerSec: fixed } } };
    const plan = planReassignment(input);
    const dynamic = simulateExpansion(input, plan, TEST_SIM);
    const still = simulateExpansion(input, plan, staticOptions);
    assert.equal(still.state, 'done');
    assert.ok(still.simulatedSeconds >= 3 * dynamic.simulatedSeconds, `static ${still.simulatedSeconds} s vs dynamic ${dynamic.simulatedSeconds} s`);
  });

  it('models p99 flat at low load and steep past the knee', () => {
    assert.equal(p99At(5, 0), 5);
    assert.ok(Math.abs(p99At(5, 0.6) / 5 - 1.324) < 0.001);
    assert.ok(p99At(5, 0.9) / 5 > 7);
    assert.equal(p99At(5, 2), p99At(5, 0.99));
  });
});
