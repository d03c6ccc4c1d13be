// A placed connection's forward to main waits for the Produces its shard served before it
// (ServedProduces, placed_serving.ts): a forward with none in flight is posted at once, one behind
// served Produces only once every one of them settled (answered or failed), and forwards queued
// meanwhile are posted in the order they were made.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_RESPONSE, type HandlerResult } from '../../../src/net/handler.js';
import { ServedProduces } from '../../../src/net/placed_serving.js';

/** A served Produce's result, settled by hand. */
function served(): { promise: Promise<HandlerResult<unknown>>; answer(): void; fail(): void } {
  let answer: () => void = () => undefined;
  let fail: () => void = () => undefined;
  const promise = new Promise<HandlerResult<unknown>>((resolve, reject) => {
    answer = () => resolve(NO_RESPONSE);
    fail = () => reject(new Error('produce failed'));
  });
  return { promise, answer, fail };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ServedProduces', () => {
  it('posts a forward at once when no served Produce is in flight', () => {
    const order: string[] = [];
    new ServedProduces().whenIdle(() => order.push('forward'));
    assert.deepEqual(order, ['forward']);
  });

  it('holds forwards until every served Produce settled, then posts them in order', async () => {
    const produces = new ServedProduces();
    const first = served();
    const second = served();
    // The connection awaits what track returns; a failed produce is its own answer's business.
    void produces.track(first.promise);
    produces.track(second.promise).catch(() => undefined);
    const order: string[] = [];
    produces.whenIdle(() => order.push('a'));
    produces.whenIdle(() => order.push('b'));
    first.answer();
    await turn();
    assert.equal(order.length, 0, 'one served Produce is still unanswered');
    second.fail();
    await turn();
    assert.deepEqual(order, ['a', 'b']);
    produces.whenIdle(() => order.push('c'));
    assert.deepEqual(order, ['a', 'b', 'c'], 'idle again');
  });
});
