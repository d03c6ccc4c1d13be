// Generic properties over every API in apiByKey, every advertised version, both directions:
// encode -> decode gives back exactly what was meant (absent fields as defaults, tagged fields
// surviving or defaulting), re-encoding is byte-identical, and arbitrary or corrupted bytes
// either decode or fail with ProtocolError, never anything else.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { aclApis, advertisedApis, apiByKey, clientQuotaApis, clusterApis, saslApis, scramCredentialApis } from '../../../src/protocol/apis/index.js';
import { ProtocolError, Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import type { AnyApi } from '../../../src/protocol/schema.js';
import { structCase } from './schema_arbitrary.js';

type Direction = 'request' | 'response';

function encode(api: AnyApi, dir: Direction, version: number, value: unknown): Buffer {
  const w = new Writer(32);
  if (dir === 'request') api.encodeRequest(version, value, w);
  else api.encodeResponse(version, value, w);
  const out = Buffer.concat(w.finish());
  assert.equal(out.length, w.length);
  return out;
}

function decode(api: AnyApi, dir: Direction, version: number, bytes: Buffer): { value: unknown; rest: number } {
  const r = new Reader(bytes);
  const value = dir === 'request' ? api.decodeRequest(version, r) : api.decodeResponse(version, r);
  return { value, rest: r.remaining() };
}

function eachVersion(fn: (api: AnyApi, version: number, dir: Direction) => void): void {
  for (const api of apiByKey.values()) {
    for (let v = api.minVersion; v <= api.maxVersion; v++) {
      for (const dir of ['request', 'response'] as const) fn(api, v, dir);
    }
  }
}

function caseFor(api: AnyApi, version: number, dir: Direction) {
  return structCase(api.definition[dir], version, api.isFlexible(version));
}

function decodesOrRejects(api: AnyApi, dir: Direction, version: number, bytes: Buffer): void {
  try {
    decode(api, dir, version, bytes);
  } catch (err) {
    if (!(err instanceof ProtocolError)) {
      assert.fail(`${api.name} v${version} ${dir} threw ${String(err)} on ${bytes.toString('hex')}`);
    }
  }
}

describe('registry', () => {
  const rangesOf = (apis: readonly AnyApi[]) => apis.map((a) => [a.key, a.key, a.minVersion, a.maxVersion]).sort((a, b) => a[0]! - b[0]!);

  it('holds every API under its key', () => {
    const ranges = [...apiByKey.entries()].map(([k, a]) => [k, a.key, a.minVersion, a.maxVersion]).sort((a, b) => a[0]! - b[0]!);
    assert.deepEqual(ranges, rangesOf([...advertisedApis, ...clusterApis, ...saslApis, ...scramCredentialApis, ...aclApis, ...clientQuotaApis]));
    assert.deepEqual(rangesOf([...saslApis, ...scramCredentialApis]), [[17, 17, 0, 1], [36, 36, 0, 2], [50, 50, 0, 0], [51, 51, 0, 0]]);
    assert.deepEqual(rangesOf(aclApis), [[29, 29, 0, 3], [30, 30, 0, 3], [31, 31, 0, 3]]);
    assert.deepEqual(rangesOf(clientQuotaApis), [[48, 48, 0, 1], [49, 49, 0, 1]]);
  });

  it('advertises the client APIs with their served ranges', () => {
    assert.deepEqual(rangesOf(advertisedApis), [
      [0, 0, 0, 11], [1, 1, 4, 17], [2, 2, 1, 7], [3, 3, 0, 12], [8, 8, 0, 9], [9, 9, 0, 9], [10, 10, 0, 4],
      [11, 11, 0, 9], [12, 12, 0, 4], [13, 13, 0, 5], [14, 14, 0, 5], [15, 15, 0, 5], [16, 16, 0, 5], [18, 18, 0, 3],
      [19, 19, 0, 7], [20, 20, 0, 6], [22, 22, 0, 4], [23, 23, 2, 4], [32, 32, 0, 4], [35, 35, 0, 4], [37, 37, 0, 3], [42, 42, 0, 2], [47, 47, 0, 0],
      [60, 60, 0, 2], [68, 68, 0, 1], [69, 69, 0, 0],
    ]);
  });

  it('registers the KRaft quorum, broker-lifecycle and cluster-only APIs apart from the advertised ones', () => {
    assert.deepEqual(rangesOf(clusterApis), [
      [33, 33, 0, 2], [43, 43, 0, 2], [44, 44, 0, 1], [45, 45, 0, 0], [46, 46, 0, 0], [52, 52, 0, 2], [53, 53, 0, 1], [54, 54, 0, 1], [55, 55, 0, 2], [56, 56, 0, 3], [59, 59, 0, 1],
      [62, 62, 0, 4], [63, 63, 0, 1], [64, 64, 0, 0], [67, 67, 0, 0], [80, 80, 0, 0], [81, 81, 0, 0],
    ]);
  });
});

describe('round trip: every API, every version', () => {
  eachVersion((api, version, dir) => {
    it(`${api.name} v${version} ${dir}`, () => {
      fc.assert(fc.property(caseFor(api, version, dir), ({ input, expected }) => {
        const bytes = encode(api, dir, version, input);
        const { value, rest } = decode(api, dir, version, bytes);
        assert.equal(rest, 0, 'decoder consumed the whole body');
        assert.deepStrictEqual(value, expected);
        assert.deepEqual(encode(api, dir, version, value), bytes, 're-encoding is identical');
      }), { numRuns: 60 });
    });
  });
});

describe('hostile bytes: decode or ProtocolError, nothing else', () => {
  it('random bytes at every version of every API, both directions', { timeout: 60_000 }, () => {
    eachVersion((api, version, dir) => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 96 }), (a) => {
        decodesOrRejects(api, dir, version, Buffer.from(a));
      }), { numRuns: 150 });
    });
  });

  it('valid frames truncated or with bytes overwritten', { timeout: 60_000 }, () => {
    eachVersion((api, version, dir) => {
      const mutation = fc.tuple(fc.nat(), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.boolean());
      fc.assert(fc.property(caseFor(api, version, dir), mutation, ({ input }, [cut, at, patch, truncate]) => {
        const bytes = encode(api, dir, version, input);
        if (truncate) {
          if (bytes.length === 0) return;
          // Decoding is deterministic and needs every byte, so any strict prefix must fail.
          const cutBytes = bytes.subarray(0, cut % bytes.length);
          assert.throws(() => decode(api, dir, version, cutBytes), ProtocolError);
          return;
        }
        const hurt = Buffer.from(bytes);
        for (let i = 0; i < patch.length && hurt.length > 0; i++) hurt[(at + i) % hurt.length] = patch[i]!;
        decodesOrRejects(api, dir, version, hurt);
      }), { numRuns: 60 });
    });
  });

  it('a claimed huge array count fails fast instead of allocating', () => {
    const started = process.hrtime.bigint();
    for (const api of apiByKey.values()) {
      for (let v = api.minVersion; v <= api.maxVersion; v++) {
        const frame = api.isFlexible(v) ? Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0]) : Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        decodesOrRejects(api, 'request', v, Buffer.concat([frame, frame, frame, frame]));
      }
    }
    assert.ok(process.hrtime.bigint() - started < 2_000_000_000n);
  });
});
