// RetryRunner: retries, giving up, the dead-letter sink retried until it takes the message, and
// abandonment (an aborted message is never reported done, even if its handler then resolves).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsumerMessage } from '../../../../src/client/consumer/types.js';
import { Outcome, RetryRunner } from '../../../../src/client/parallel/retry.js';
import type { RetryCounters } from '../../../../src/client/parallel/retry.js';

const message: ConsumerMessage = { topic: 't', partition: 0, offset: 5, timestamp: 0, key: null, value: Buffer.from('v'), headers: [] };
const counters = (): RetryCounters => ({ retries: 0, handlerErrors: 0, lastError: undefined });

describe('RetryRunner', () => {
  it('gives up after max retries without a dead-letter topic', async () => {
    let calls = 0;
    const c = counters();
    const runner = new RetryRunner(async () => void (calls++, assert.fail('boom')), { max: 2, backoffMs: 1 }, null, c);
    assert.equal(await runner.run(message, new AbortController().signal), Outcome.failed);
    assert.equal(calls, 3);
    assert.equal(c.retries, 2);
    assert.equal(c.handlerErrors, 3);
  });

  it('keeps offering a poison message to a failing sink until it takes it', async () => {
    let offers = 0;
    const sink = { send: async (): Promise<void> => void (++offers < 3 && assert.fail('sink down')) };
    const runner = new RetryRunner(async () => assert.fail('poison'), { max: 0, backoffMs: 1 }, { topic: 'dlt', sink }, counters());
    assert.equal(await runner.run(message, new AbortController().signal), Outcome.deadLettered);
    assert.equal(offers, 3);
  });

  it('reports an aborted message abandoned, even when its handler then resolves', async () => {
    const abort = new AbortController();
    const runner = new RetryRunner(
      (_m, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
      {}, null, counters(),
    );
    const outcome = runner.run(message, abort.signal);
    abort.abort();
    assert.equal(await outcome, Outcome.abandoned);
  });

  it('abandons during a backoff wait', async () => {
    const abort = new AbortController();
    const runner = new RetryRunner(async () => assert.fail('x'), { max: 5, backoffMs: 60_000, maxBackoffMs: 60_000 }, null, counters());
    const outcome = runner.run(message, abort.signal);
    setTimeout(() => abort.abort(), 5);
    assert.equal(await outcome, Outcome.abandoned);
  });
});
