// Raft entries as record batches: the round trip, the batch layout KRaft uses (shared data
// batches, one control batch per leader-change or voters entry), the LeaderChangeMessage bytes
// checked against a hand-built encoding, and corrupt input rejected with EntryBatchError.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  EntryBatchError, decodeEntryBatches, decodeVoterEndpoints, decodeVoters, encodeEntryBatches, encodeVoters,
} from '../../../../src/coordinator/raft/entry_batches.js';
import type { Entry } from '../../../../src/coordinator/raft/types.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { BatchField, CRC_START, crc32c } from '../../../../src/protocol/record_batch.js';
import { decodeRecordBatches } from '../../../../src/protocol/records.js';
import { entries, voterSet } from './raft_arbitrary.js';

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));

function data(offset: number, epoch: number, s: string): Entry {
  return { offset, epoch, kind: 'data', data: bytes(s) };
}

describe('entry batches', () => {
  it('decode(encode(entries)) gives the entries back', () => {
    fc.assert(fc.property(entries, (es) => {
      assert.deepStrictEqual(decodeEntryBatches(Buffer.concat(encodeEntryBatches(es))), es);
    }), { numRuns: 500 });
  });

  it('shares a batch between data entries of one epoch and gives each control entry its own', () => {
    const es: Entry[] = [
      { offset: 10, epoch: 3, kind: 'leaderChange', data: new Uint8Array(0) },
      data(11, 3, 'a'), data(12, 3, 'bb'),
      { offset: 13, epoch: 3, kind: 'voters', data: encodeVoters([1, 2, 3]) },
      data(14, 3, 'c'), data(15, 4, 'd'),
    ];
    const batches = decodeRecordBatches(Buffer.concat(encodeEntryBatches(es)));
    assert.deepStrictEqual(batches.map((b) => [b.baseOffset, b.lastOffset, b.partitionLeaderEpoch, b.control]), [
      [10, 10, 3, true], [11, 12, 3, false], [13, 13, 3, true], [14, 14, 3, false], [15, 15, 4, false],
    ]);
    // Control record keys: version 0, then the type (2 = LEADER_CHANGE, 6 = KRAFT_VOTERS).
    assert.deepStrictEqual(batches[0]!.records[0]!.key, Buffer.from([0, 0, 0, 2]));
    assert.deepStrictEqual(batches[2]!.records[0]!.key, Buffer.from([0, 0, 0, 6]));
    assert.deepStrictEqual(batches[1]!.records.map((r) => [r.key, r.value?.toString()]), [[null, 'a'], [null, 'bb']]);
  });

  it('writes a LeaderChangeMessage v0 value byte for byte', () => {
    const [batch] = encodeEntryBatches([{ offset: 0, epoch: 1, kind: 'leaderChange', data: new Uint8Array(0) }], { leaderId: 2, voters: [1, 2] });
    const value = decodeRecordBatches(batch!)[0]!.records[0]!.value;
    // Version int16 0, LeaderId int32 2, Voters compact array of 2 {VoterId int32, no tags},
    // GrantingVoters compact array of 0, no tags.
    assert.deepStrictEqual(value, Buffer.from([0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 1, 0]));
  });

  it('writes a VotersRecord v0 value byte for byte', () => {
    // Version int16 0; Voters compact array of 1: VoterId int32 5, VoterUuid (16 zero bytes),
    // Endpoints compact array of 0, KRaftVersionFeature {min int16 0, max int16 1, no tags},
    // no tags; no tags.
    const expected = Buffer.concat([
      Buffer.from([0, 0, 2, 0, 0, 0, 5]), Buffer.alloc(16), Buffer.from([1, 0, 0, 0, 1, 0, 0, 0]),
    ]);
    assert.deepStrictEqual(Buffer.from(encodeVoters([5])), expected);
    assert.deepStrictEqual(decodeVoters(expected), [5]);
  });

  it('round-trips voter sets and rejects empty or repeated ones', () => {
    fc.assert(fc.property(voterSet, (v) => assert.deepStrictEqual(decodeVoters(encodeVoters(v)), v)));
    assert.throws(() => encodeVoters([]), RangeError);
    assert.throws(() => encodeVoters([1, 1]), RangeError);
    const twice = Buffer.from(encodeVoters([4, 9]));
    // The second voter's id follows version (2), array length (1) and the first voter (27 bytes).
    twice.writeInt32BE(4, 3 + 27);
    assert.throws(() => decodeVoters(twice), (err: unknown) => err instanceof EntryBatchError && /twice/.test(err.message));
  });

  it('round-trips the endpoints of the voters that carry them, and only of voters', () => {
    const endpoint = fc.record({ name: fc.string({ maxLength: 12 }), host: fc.string({ maxLength: 40 }), port: fc.integer({ min: 0, max: 65535 }) }, { noNullPrototype: true });
    fc.assert(fc.property(voterSet, fc.array(fc.array(endpoint, { maxLength: 3 }), { maxLength: 7 }), (voters, lists) => {
      const given = new Map(voters.map((id, i) => [id, lists[i] ?? []]));
      given.set(Math.max(...voters) + 1, [{ name: 'X', host: 'not-a-voter', port: 1 }]);
      const expected = new Map(voters.filter((id) => given.get(id)!.length > 0).map((id) => [id, given.get(id)!]));
      const data = encodeVoters(voters, given);
      assert.deepStrictEqual(decodeVoterEndpoints(data), expected);
      assert.deepStrictEqual(decodeVoters(data), voters);
    }));
  });

  it('rejects a flipped byte anywhere in a batch CRC covers', () => {
    fc.assert(fc.property(entries.filter((es) => es.length > 0), fc.nat(), fc.integer({ min: 1, max: 255 }), (es, at, xor) => {
      const buf = Buffer.concat(encodeEntryBatches(es));
      const first = buf.readInt32BE(BatchField.batchLength) + 12;
      const pos = CRC_START + (at % (first - CRC_START));
      buf[pos]! ^= xor;
      assert.throws(() => decodeEntryBatches(buf), (err: unknown) => err instanceof EntryBatchError && err.code === ErrorCode.CORRUPT_MESSAGE);
    }), { numRuns: 300 });
  });

  it('rejects a cut-off batch, a gap between batches and a control type that is no entry', () => {
    const two = encodeEntryBatches([data(0, 1, 'x'), data(1, 2, 'y')]);
    const whole = Buffer.concat(two);
    assert.throws(() => decodeEntryBatches(whole.subarray(0, whole.length - 1)), EntryBatchError);
    const gap = encodeEntryBatches([data(5, 2, 'y')]);
    assert.throws(() => decodeEntryBatches(Buffer.concat([two[0]!, gap[0]!])), /does not follow/);
    assert.throws(() => encodeEntryBatches([data(0, 1, 'x'), data(2, 1, 'y')]), RangeError);
    // A COMMIT marker (type 1) is a control record of transactions, not a Raft entry.
    const [lc] = encodeEntryBatches([{ offset: 0, epoch: 1, kind: 'leaderChange', data: new Uint8Array(0) }]);
    const marker = Buffer.from(lc!);
    const keyAt = marker.indexOf(Buffer.from([0, 0, 0, 2]), 61);
    marker.writeInt16BE(1, keyAt + 2);
    marker.writeUInt32BE(crc32c(marker.subarray(CRC_START)), BatchField.crc);
    assert.throws(() => decodeEntryBatches(marker), /control record type 1/);
  });

  it('decodes no bytes as no entries', () => {
    assert.deepStrictEqual(decodeEntryBatches(new Uint8Array(0)), []);
  });
});
