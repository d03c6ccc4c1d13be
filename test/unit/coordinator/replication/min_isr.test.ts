// The acks=all rules as pure functions: effective min ISR, admission before append, the fate of
// an appended produce; and the caught-up rule shared with the metadata quorum.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { caughtUpAfterFetch } from '../../../../src/coordinator/replication/caught_up.js';
import { acksAllOutcome, admitProduce, effectiveMinIsr } from '../../../../src/coordinator/replication/min_isr.js';

describe('min ISR rules', () => {
  it('caps min.insync.replicas at the replication factor and keeps it at least 1', () => {
    assert.equal(effectiveMinIsr(2, 3), 2);
    assert.equal(effectiveMinIsr(3, 2), 2);
    assert.equal(effectiveMinIsr(0, 3), 1);
  });

  it('admits acks=all only with enough in-sync replicas; other acks always', () => {
    assert.equal(admitProduce(-1, 1, 2), ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal(admitProduce(-1, 2, 2), ErrorCode.NONE);
    assert.equal(admitProduce(1, 1, 2), ErrorCode.NONE);
    assert.equal(admitProduce(0, 1, 2), ErrorCode.NONE);
  });

  it('completes once the high watermark covers the records, fails after append below min ISR', () => {
    assert.equal(acksAllOutcome(10, 9, 2, 2), 'waiting');
    assert.equal(acksAllOutcome(10, 10, 2, 2), ErrorCode.NONE);
    assert.equal(acksAllOutcome(10, 9, 1, 2), ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    assert.equal(acksAllOutcome(10, 10, 1, 2), ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
  });
});

describe('caughtUpAfterFetch', () => {
  it('is now at the log end, the previous fetch time when reaching the previous log end, else unchanged', () => {
    const history = { lastCaughtUp: 5, lastFetch: 20, leaderEndAtLastFetch: 100 };
    assert.equal(caughtUpAfterFetch(history, 120, 120, 30), 30);
    assert.equal(caughtUpAfterFetch(history, 100, 120, 30), 20);
    assert.equal(caughtUpAfterFetch(history, 99, 120, 30), 5);
    assert.equal(caughtUpAfterFetch({ lastCaughtUp: -1, lastFetch: 0, leaderEndAtLastFetch: -1 }, 0, 120, 30), -1, 'no previous fetch to compare with');
  });
});
