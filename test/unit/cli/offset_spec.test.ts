// The consume --offset grammar: each form parses to the start it names, relative times use the
// injected clock, bad input is a usage error that names the grammar, and (property) every
// resolved start lies within the partition's bounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UsageError } from '../../../src/cli/args.js';
import { parseDuration, parseOffsetSpec, startOffset } from '../../../src/cli/offset_spec.js';

const NOW = Date.parse('2026-12-02T14:00:00Z');

test('each form of the grammar', () => {
  assert.deepEqual(parseOffsetSpec('start', NOW), { kind: 'earliest' });
  assert.deepEqual(parseOffsetSpec('end', NOW), { kind: 'latest' });
  assert.deepEqual(parseOffsetSpec('42', NOW), { kind: 'offset', offset: 42 });
  assert.deepEqual(parseOffsetSpec('+5', NOW), { kind: 'after-start', count: 5 });
  assert.deepEqual(parseOffsetSpec('-3', NOW), { kind: 'before-end', count: 3 });
  assert.deepEqual(parseOffsetSpec('@1700000000000', NOW), { kind: 'timestamp', timestamp: 1700000000000 });
  assert.deepEqual(parseOffsetSpec('@2026-12-02T13:00:00Z', NOW), { kind: 'timestamp', timestamp: NOW - 3_600_000 });
  assert.deepEqual(parseOffsetSpec('@-1h', NOW), { kind: 'timestamp', timestamp: NOW - 3_600_000 });
  assert.deepEqual(parseOffsetSpec('@-1h30m', NOW), { kind: 'timestamp', timestamp: NOW - 5_400_000 });
  assert.deepEqual(parseOffsetSpec('@-2d', NOW), { kind: 'timestamp', timestamp: NOW - 2 * 86_400_000 });
});

test('bad input is a usage error naming the grammar', () => {
  for (const raw of ['', 'begin', '+', '-x', '@', '@-1y', '@-h', '@yesterday', '1.5', '+-1', '@2026-13-45', '99999999999999999999']) {
    assert.throws(() => parseOffsetSpec(raw, NOW), (err: unknown) => err instanceof UsageError && /expected start, end/.test(err.message), raw);
  }
});

test('resolving against bounds: +N from the start, -N from the end, clamped', () => {
  const b = { earliest: 10, latest: 20, atTimestamp: 15 };
  assert.equal(startOffset({ kind: 'earliest' }, b), 10);
  assert.equal(startOffset({ kind: 'latest' }, b), 20);
  assert.equal(startOffset({ kind: 'after-start', count: 3 }, b), 13);
  assert.equal(startOffset({ kind: 'after-start', count: 30 }, b), 20);
  assert.equal(startOffset({ kind: 'before-end', count: 3 }, b), 17);
  assert.equal(startOffset({ kind: 'before-end', count: 30 }, b), 10);
  assert.equal(startOffset({ kind: 'offset', offset: 2 }, b), 10);
  assert.equal(startOffset({ kind: 'timestamp', timestamp: 0 }, b), 15);
  assert.equal(startOffset({ kind: 'timestamp', timestamp: 0 }, { ...b, atTimestamp: -1 }), 20);
});

test('property: durations add up, and every start lies within the bounds', () => {
  const unit = fc.constantFrom(['ms', 1], ['s', 1000], ['m', 60_000], ['h', 3_600_000], ['d', 86_400_000]);
  fc.assert(fc.property(fc.array(fc.tuple(fc.nat(1000), unit), { minLength: 1, maxLength: 4 }), (parts) => {
    const text = parts.map(([n, [u]]) => `${n}${u}`).join('');
    assert.equal(parseDuration(text), parts.reduce((sum, [n, [, ms]]) => sum + n * ms, 0));
  }));
  const spec = fc.oneof(
    fc.constantFrom('start', 'end'),
    fc.nat().map((n) => String(n)),
    fc.nat().map((n) => `+${n}`),
    fc.nat().map((n) => `-${n}`),
    fc.nat({ max: 10_000_000 }).map((n) => `@-${n}s`),
  );
  fc.assert(fc.property(spec, fc.nat(1_000_000), fc.nat(1_000_000), fc.integer({ min: -1, max: 2_000_000 }), (raw, lo, width, at) => {
    const b = { earliest: lo, latest: lo + width, atTimestamp: at >= 0 ? Math.min(lo + width, lo + at) : -1 };
    const offset = startOffset(parseOffsetSpec(raw, NOW), b);
    assert.ok(offset >= b.earliest && offset <= b.latest, `${raw} -> ${offset} outside [${b.earliest}, ${b.latest}]`);
  }));
});
