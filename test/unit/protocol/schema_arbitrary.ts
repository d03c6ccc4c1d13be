// Test helper: derives fast-check generators from an API's Field lists, so property tests cover
// every registered API (ours and codec2's) and every version without per-API code.
// Each generated case is a pair: `input` (what we hand the encoder; it may omit properties and
// carry junk in properties the version lacks) and `expected` (what decoding must give back).

import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { fieldDefault, versionIn, ZERO_UUID } from '../../../src/protocol/schema.js';
import type { Field, Primitive } from '../../../src/protocol/schema.js';

export interface Case {
  readonly input: unknown;
  readonly expected: unknown;
}

const MISSING = Symbol('missing');

const safeInt64 = fc.oneof(
  fc.constantFrom(0, -1, 2 ** 53 - 1, -(2 ** 53) + 1, 2 ** 32, -(2 ** 31) - 1),
  fc.maxSafeInteger(),
);
const str = fc.string({ unit: 'binary', maxLength: 12 });
const buf = fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a));
const hex16 = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((a) => Buffer.from(a).toString('hex'));

function same<T>(arb: Arbitrary<T>): Arbitrary<Case> {
  return arb.map((v) => ({ input: v, expected: v }));
}

function primitiveCase(type: Primitive): Arbitrary<Case> {
  switch (type) {
    case 'int8': return same(fc.integer({ min: -128, max: 127 }));
    case 'int16': return same(fc.integer({ min: -32768, max: 32767 }));
    case 'int32': return same(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
    case 'int64': return same(safeInt64);
    case 'uint16': return same(fc.integer({ min: 0, max: 65535 }));
    case 'uint32': return same(fc.integer({ min: 0, max: 2 ** 32 - 1 }));
    case 'float64': return same(fc.double());
    case 'bool': return same(fc.boolean());
    case 'uuid': return same(fc.oneof(fc.constant(ZERO_UUID), hex16));
    case 'string': return same(str);
    case 'bytes': return same(buf);
    case 'records':
      // Encoders take a buffer or chunks; decoders return one view.
      return fc.oneof(same(buf), fc.array(buf, { maxLength: 3 }).map((parts) => ({ input: parts, expected: Buffer.concat(parts) })));
  }
}

/** One value of f's element type (no null, no array). */
function valueCase(f: Field, version: number, flexible: boolean): Arbitrary<Case> {
  return typeof f.type === 'string' ? primitiveCase(f.type) : structCase(f.type, version, flexible);
}

function presentCase(f: Field, version: number, flexible: boolean): Arbitrary<Case> {
  let arb = f.array
    ? fc.array(valueCase(f, version, flexible), { maxLength: 3 }).map((items) => ({
      input: items.map((c) => c.input), expected: items.map((c) => c.expected),
    }))
    : valueCase(f, version, flexible);
  if (versionIn(f.nullableVersions, version)) {
    arb = fc.oneof(arb, fc.constant<Case>({ input: null, expected: null }));
  }
  const dflt = fieldDefault(f);
  const tagged = flexible && versionIn(f.taggedVersions, version);
  // Omitted properties encode the default; tagged defaults must also survive being left out
  // of the tag buffer. Only when null is writable here, or the default is not null.
  if (tagged || dflt !== null || versionIn(f.nullableVersions, version)) {
    arb = fc.oneof(arb, fc.constant<Case>({ input: MISSING, expected: fieldDefault(f) }));
  }
  return arb;
}

/** A field this version lacks: whatever we pass is ignored, decode yields the default. */
function absentCase(f: Field): Arbitrary<Case> {
  return fc.constantFrom<unknown>(MISSING, 'junk', 12345, null, [1, 2])
    .map((input) => ({ input, expected: fieldDefault(f) }));
}

export function structCase(fields: readonly Field[], version: number, flexible: boolean): Arbitrary<Case> {
  const parts = fields.map((f) => (versionIn(f.versions, version) ? presentCase(f, version, flexible) : absentCase(f)));
  return fc.tuple(...parts).map((cases) => {
    const input: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    fields.forEach((f, i) => {
      const c = cases[i]!;
      if (c.input !== MISSING) input[f.name] = c.input;
      expected[f.name] = c.expected;
    });
    return { input, expected };
  });
}
