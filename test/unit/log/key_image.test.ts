// KeyImage: after any sequence of puts and tombstones it holds exactly the last value per key
// (what compaction keeps), its byte count matches, and its batches hold every live record once,
// in the order of their latest records.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KeyImage } from '../../../src/log/key_image.js';

const op = fc.record({
  key: fc.constantFrom('a', 'b', 'c', 'dd', 'eee'),
  value: fc.option(fc.string({ maxLength: 12 })),
});

test('holds the last value per key, deletes on tombstones, counts live bytes, batches all', () => {
  fc.assert(fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 40 }), (ops, batchBytes) => {
    const image = new KeyImage();
    const model = new Map<string, string>();
    for (const o of ops) {
      image.apply({ key: Buffer.from(o.key), value: o.value === null ? null : Buffer.from(o.value) });
      model.delete(o.key);
      if (o.value !== null) model.set(o.key, o.value);
    }
    assert.equal(image.size, model.size);
    let bytes = 0;
    for (const [k, v] of model) bytes += Buffer.byteLength(k) + Buffer.byteLength(v);
    assert.equal(image.bytes, bytes);
    const batches = image.batches(batchBytes);
    const flat = batches.flat().map((r) => [r.key.toString(), r.value!.toString()] as const);
    // The model re-inserts a key at each write, so its order is that of the latest records.
    assert.deepEqual(flat, [...model]);
    assert.equal(flat.length, model.size);
    for (const b of batches) assert.ok(b.length > 0);
  }));
});
