// Tests of the bench's hot-path batch pieces: the pre-built batch template (valid for the
// broker's validator, decodable by the client codec, still valid after stamping), the produce
// frame that carries it, and the in-place fetch walk that reads the stamps back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { buildBatchTemplate, stampValues } from '../../../src/bench/load/batch_template.js';
import { walkBatches } from '../../../src/bench/load/fetch_walk.js';
import type { WalkTotals } from '../../../src/bench/load/fetch_walk.js';
import { CORRELATION_ID_AT, buildProduceFrame } from '../../../src/bench/load/produce_wire.js';
import { spread } from '../../../bench/report.js';
import { decodeRecordBatches } from '../../../src/protocol/records.js';
import { ProduceApi } from '../../../src/protocol/apis/produce.js';
import { readRequestHeader } from '../../../src/protocol/header.js';
import { Reader } from '../../../src/protocol/reader.js';
import { validateProducedBatch, writeInt64 } from '../../../src/protocol/record_batch.js';

const totals = (): WalkTotals => ({ batches: 0, records: 0, bytes: 0, nextOffset: 0 });

/** A copy of `batch` as a broker would store it, at base offset `base`. */
function atOffset(batch: Buffer, base: number): Buffer {
  const copy = Buffer.from(batch);
  writeInt64(copy, 0, base);
  return copy;
}

test('a template is one valid batch whose records decode to the requested values', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 2000 }), (records, valueBytes) => {
    const t = buildBatchTemplate(records, valueBytes, 1_700_000_000_000);
    assert.equal(validateProducedBatch(t.batch, 1 << 24).ok, true);
    const [decoded] = decodeRecordBatches(t.batch);
    assert.ok(decoded);
    assert.equal(decoded.records.length, records);
    for (const r of decoded.records) {
      assert.equal(r.key, null);
      assert.deepEqual(r.value, Buffer.alloc(valueBytes, 'x'));
      assert.equal(r.timestamp, 1_700_000_000_000);
    }
  }), { numRuns: 60 });
});

test('stamping writes the value into every record and keeps the CRC valid', () => {
  const t = buildBatchTemplate(7, 64);
  const frame = Buffer.concat([Buffer.alloc(13, 1), t.batch, Buffer.alloc(3)]);
  stampValues(t, frame, 13, 1234.5);
  const stamped = frame.subarray(13, 13 + t.batch.length);
  assert.equal(validateProducedBatch(stamped, 1 << 20).ok, true);
  for (const r of decodeRecordBatches(stamped)[0]?.records ?? []) assert.equal(r.value?.readDoubleLE(0), 1234.5);
  assert.throws(() => stampValues(buildBatchTemplate(1, 4), Buffer.alloc(200), 0, 1), RangeError);
});

test('the produce frame carries the batch where it says, with a patchable correlation id', () => {
  const t = buildBatchTemplate(3, 10);
  for (const version of [3, 7, 9, 11]) {
    const f = buildProduceFrame({ version, clientId: 'c', topic: 'tp', partition: 2, acks: -1, timeoutMs: 500, batch: t.batch });
    assert.equal(f.frame.readInt32BE(0), f.frame.length - 4);
    f.frame.writeInt32BE(4242, CORRELATION_ID_AT);
    const r = new Reader(f.frame, 4);
    const h = readRequestHeader(r, (_k, v) => ProduceApi.isFlexible(v));
    assert.equal(h.correlationId, 4242);
    const req = ProduceApi.decodeRequest(version, r);
    assert.equal(req.acks, -1);
    assert.equal(req.topicData[0]?.partitionData[0]?.index, 2);
    assert.deepEqual(req.topicData[0]?.partitionData[0]?.records, t.batch);
    assert.deepEqual(f.frame.subarray(f.batchAt, f.batchAt + t.batch.length), t.batch);
  }
});

test('the fetch walk counts whole batches from the fetch offset and visits their values', () => {
  const t = buildBatchTemplate(4, 16);
  const a = atOffset(t.batch, 100);
  const b = atOffset(t.batch, 104);
  stampValues(t, b, 0, 9.25);
  const data = Buffer.concat([a, b, b.subarray(0, 30)]); // trailing partial batch
  const seen: number[] = [];
  const got = totals();
  walkBatches(data, 102, got, (buf, at, length) => {
    assert.equal(length, 16);
    seen.push(buf.readDoubleLE(at));
  });
  assert.deepEqual({ batches: got.batches, records: got.records, nextOffset: got.nextOffset }, { batches: 2, records: 6, nextOffset: 108 });
  assert.equal(got.bytes, a.length + b.length);
  assert.equal(seen.length, 6);
  assert.deepEqual(seen.slice(2), [9.25, 9.25, 9.25, 9.25]);
});

test('spread gives the median and range of the finite values', () => {
  assert.deepEqual(spread([3, 1, 2]), { median: 2, min: 1, max: 3, n: 3 });
  assert.deepEqual(spread([4, NaN, 1, 3, 2]), { median: 2.5, min: 1, max: 4, n: 4 });
  assert.equal(spread([]).n, 0);
});
