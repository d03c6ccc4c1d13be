// BatchDelivery: per-record promises resolve with base offset + index (or -1 for acks=0),
// reject all together with the batch's KafkaError, settle once, and time out past the deadline.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BatchDelivery } from '../../../../src/client/producer/delivery.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';

describe('BatchDelivery', () => {
  it('resolves each record with the base offset plus its index', async () => {
    const d = new BatchDelivery('t', 3, 1000, 500);
    const ps = [d.track(), d.track(), d.track()];
    d.resolve(41);
    assert.deepEqual(await Promise.all(ps), [
      { topic: 't', partition: 3, offset: 41 },
      { topic: 't', partition: 3, offset: 42 },
      { topic: 't', partition: 3, offset: 43 },
    ]);
    assert.equal(d.count, 3);
    assert.ok(d.settled);
  });

  it('gives offset -1 when the offset is unknown (acks=0)', async () => {
    const d = new BatchDelivery('t', 0, 0, 10);
    const ps = [d.track(), d.track()];
    d.resolve(-1);
    assert.deepEqual((await Promise.all(ps)).map((m) => m.offset), [-1, -1]);
  });

  it('rejects every record with the batch error and settles only once', async () => {
    const d = new BatchDelivery('t', 0, 0, 10);
    const ps = [d.track(), d.track()];
    const err = new KafkaError(ErrorCode.MESSAGE_TOO_LARGE);
    d.reject(err);
    d.resolve(5);
    d.reject(new KafkaError(ErrorCode.CORRUPT_MESSAGE));
    for (const p of ps) await assert.rejects(p, (e) => e === err);
    assert.throws(() => d.track());
  });

  it('expires at creation + delivery timeout with REQUEST_TIMED_OUT', async () => {
    const d = new BatchDelivery('t', 2, 1000, 500);
    const p = d.track();
    assert.equal(d.isExpired(1499), false);
    assert.equal(d.isExpired(1500), true);
    const err = d.expire(1600);
    assert.equal(err.code, ErrorCode.REQUEST_TIMED_OUT);
    assert.match(err.message, /1 record\(s\) for t-2: 600 ms/);
    await assert.rejects(p, (e) => e === err);
  });

  it('ignores a late answer after expiry', async () => {
    const d = new BatchDelivery('t', 0, 0, 1);
    const p = d.track();
    d.expire(5);
    d.resolve(10);
    await assert.rejects(p, (e) => e instanceof KafkaError && e.code === ErrorCode.REQUEST_TIMED_OUT);
  });
});
