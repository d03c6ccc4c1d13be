// The generic codec's rules on a synthetic API whose every byte we write by hand: version
// gating, defaults, tagged-field emission and skipping, nullable structs, definition checks.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defineApi, versionIn } from '../../../src/protocol/schema.js';
import type { Field } from '../../../src/protocol/schema.js';
import { ProtocolError, Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import { Bytes } from './golden_helpers.js';

const point: readonly Field[] = [
  { name: 'x', type: 'int32', versions: '0+', default: -1 },
  { name: 'y', type: 'int32', versions: '0+', default: -1 },
];

const item: readonly Field[] = [
  { name: 'id', type: 'int16', versions: '0+' },
  { name: 'note', type: 'string', versions: '1+', nullableVersions: '1+', default: null },
  { name: 'hint', type: 'int32', versions: '2+', taggedVersions: '2+', tag: 4, default: 7 },
];

const demo = defineApi<Record<string, unknown>, Record<string, unknown>>({
  apiKey: 999,
  name: 'Demo',
  minVersion: 0,
  maxVersion: 3,
  flexibleVersions: '2+',
  request: [
    { name: 'label', type: 'string', versions: '0+' },
    { name: 'items', type: item, array: true, versions: '0+', nullableVersions: '1+' },
    { name: 'onlyOld', type: 'int8', versions: '0-1', default: 5 },
    { name: 'where', type: point, versions: '3+', nullableVersions: '3+' },
    { name: 'cluster', type: 'string', versions: '2+', nullableVersions: '2+', default: null, taggedVersions: '2+', tag: 1 },
    { name: 'origin', type: point, versions: '2+', taggedVersions: '2+', tag: 0 },
  ],
  response: [{ name: 'ok', type: 'bool', versions: '0+' }],
});

function enc(version: number, value: Record<string, unknown>): Buffer {
  const w = new Writer();
  demo.encodeRequest(version, value, w);
  return Buffer.concat(w.finish());
}

function dec(version: number, bytes: Buffer): Record<string, unknown> {
  const r = new Reader(bytes);
  const out = demo.decodeRequest(version, r);
  assert.equal(r.remaining(), 0);
  return out;
}

const full = {
  label: 'L', items: [{ id: 1, note: 'n', hint: 9 }], onlyOld: 3,
  where: { x: 1, y: 2 }, cluster: 'c', origin: { x: 5, y: -1 },
};

describe('version gating', () => {
  it('v0 writes only v0 fields, classic encodings, and ignores the rest', () => {
    const bytes = new Bytes().str('L').arr(1).i16(1).i8(3).build();
    assert.deepEqual(enc(0, full), bytes);
    assert.deepEqual(dec(0, bytes), {
      label: 'L', items: [{ id: 1, note: null, hint: 7 }], onlyOld: 3,
      where: null, cluster: null, origin: { x: -1, y: -1 },
    });
  });

  it('v2 is compact, drops onlyOld, and puts tagged fields in ascending tag order', () => {
    const bytes = new Bytes().cstr('L')
      .carr(1).i16(1).cstr('n').uvarint(1).tag(4, new Bytes().i32(9))
      .uvarint(2).tag(0, new Bytes().i32(5).i32(-1).tags0()).tag(1, new Bytes().cstr('c')).build();
    assert.deepEqual(enc(2, full), bytes);
    assert.deepEqual(dec(2, bytes), { ...full, onlyOld: 5, where: null });
  });

  it('tagged fields equal to their defaults are left out', () => {
    const value = { label: 'L', items: [{ id: 1, note: null, hint: 7 }], cluster: null, origin: { x: -1, y: -1 } };
    const bytes = new Bytes().cstr('L').carr(1).i16(1).cstr(null).tags0().tags0().build();
    assert.deepEqual(enc(2, value), bytes);
  });

  it('a nullable struct carries an int8 presence marker', () => {
    const present = new Bytes().cstr('L').carr(0).i8(1).i32(1).i32(2).tags0().tags0().build();
    assert.deepEqual(enc(3, { label: 'L', items: [], where: { x: 1, y: 2 } }), present);
    assert.deepEqual(dec(3, present).where, { x: 1, y: 2 });
    const absent = new Bytes().cstr('L').carr(0).i8(-1).tags0().build();
    assert.deepEqual(enc(3, { label: 'L', items: [], where: null }), absent);
    assert.equal(dec(3, absent).where, null);
  });

  it('missing properties encode their defaults; null arrays only where nullable', () => {
    assert.deepEqual(enc(0, {}), new Bytes().str('').arr(0).i8(5).build());
    assert.deepEqual(enc(1, { label: 'x', items: null }), new Bytes().str('x').arr(null).i8(5).build());
    assert.throws(() => enc(0, { label: 'x', items: null }), TypeError);
    assert.throws(() => enc(1, { label: null }), TypeError);
  });
});

describe('decoding tag buffers', () => {
  it('skips unknown tags at every level and keeps declared ones', () => {
    const bytes = new Bytes().cstr('L')
      .carr(1).i16(1).cstr(null).uvarint(2).tag(3, new Bytes().i8(1)).tag(4, new Bytes().i32(8))
      .uvarint(2).tag(1, new Bytes().cstr('k')).tag(77, new Bytes().raw(Buffer.alloc(20))).build();
    const out = dec(2, bytes);
    assert.deepEqual(out.items, [{ id: 1, note: null, hint: 8 }]);
    assert.equal(out.cluster, 'k');
    assert.deepEqual(out.origin, { x: -1, y: -1 });
  });

  it('a tagged value cannot read past its declared size', () => {
    const bytes = new Bytes().cstr('L').carr(0).uvarint(1).uvarint(0).uvarint(3).i32(1).i32(2).tags0().build();
    assert.throws(() => dec(2, bytes), ProtocolError);
  });

  it('decoded objects of one struct have one shape in every version', () => {
    const shapes = new Set<string>();
    shapes.add(Object.keys(dec(0, enc(0, full))).join());
    shapes.add(Object.keys(dec(2, enc(2, full))).join());
    shapes.add(Object.keys(dec(3, enc(3, full))).join());
    assert.equal(shapes.size, 1);
  });
});

describe('definitions', () => {
  const base = { apiKey: 1, name: 'Bad', minVersion: 0, maxVersion: 2, flexibleVersions: '1+', response: [] };
  const bad: [string, readonly Field[]][] = [
    ['bad field name', [{ name: 'Bad-Name', type: 'int8', versions: '0+' }]],
    ['duplicate field', [{ name: 'a', type: 'int8', versions: '0+' }, { name: 'a', type: 'int8', versions: '0+' }]],
    ['tagged in non-flexible', [{ name: 'a', type: 'int8', versions: '0+', taggedVersions: '0+', tag: 0 }]],
    ['duplicate tag', [
      { name: 'a', type: 'int8', versions: '1+', taggedVersions: '1+', tag: 0 },
      { name: 'b', type: 'int8', versions: '1+', taggedVersions: '1+', tag: 0 }]],
    ['needs a tag', [{ name: 'a', type: 'int8', versions: '1+', taggedVersions: '1+' }]],
    ['unknown type', [{ name: 'a', type: 'int128' as 'int8', versions: '0+' }]],
    ['bad version spec', [{ name: 'a', type: 'int8', versions: '1+2' }]],
  ];
  for (const [what, request] of bad) {
    it(`rejects: ${what}`, () => {
      assert.throws(() => defineApi({ ...base, request }), Error);
    });
  }

  it('versions outside the advertised range are refused as ProtocolError', () => {
    assert.throws(() => demo.decodeRequest(4, new Reader(Buffer.alloc(0))), ProtocolError);
    assert.throws(() => demo.isFlexible(-1), ProtocolError);
  });

  it('version specs', () => {
    assert.equal(versionIn('3+', 2), false);
    assert.equal(versionIn('3+', 3), true);
    assert.equal(versionIn('0-2', 2), true);
    assert.equal(versionIn('0-2', 3), false);
    assert.equal(versionIn('4', 4), true);
    assert.equal(versionIn('none', 0), false);
    assert.equal(versionIn(undefined, 0), false);
  });
});
