// Properties of one Raft node fed arbitrary, stale, duplicated and hostile input: it never throws,
// its epoch never goes back, it votes at most once per epoch and persists every vote and epoch
// before (in the same Ready as) any message that depends on it, commits contiguously, only what is
// durable locally, and never below what it applied. Also the log's epoch lookup against a model.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RaftLog } from '../../../src/coordinator/raft/log.js';
import { RaftNode, type Mutation } from '../../../src/coordinator/raft/raft_node.js';
import type { Entry, FetchRequest, HardState, Message, Ready } from '../../../src/coordinator/raft/types.js';
import { FRESH, entry, seeded } from './raft_fixture.js';

const PEERS = [2, 3, 4, 5];

// Epochs are relative to the node's current one, so most input is plausible (same or next epoch)
// and some is stale or from the future; fetch positions are relative to the node's log end.
type Command =
  | { readonly kind: 'tick'; readonly times: number }
  | { readonly kind: 'vote'; readonly from: number; readonly epochDelta: number; readonly preVote: boolean; readonly lastEpochDelta: number; readonly lastOffsetDelta: number }
  | { readonly kind: 'voteResponse'; readonly from: number; readonly epochDelta: number; readonly preVote: boolean; readonly granted: boolean; readonly leaderId: number }
  | { readonly kind: 'begin'; readonly from: number; readonly epochDelta: number }
  | { readonly kind: 'end'; readonly from: number; readonly epochDelta: number; readonly successors: number[] }
  | { readonly kind: 'fetch'; readonly from: number; readonly epochDelta: number; readonly offsetDelta: number; readonly lastEpochDelta: number }
  | { readonly kind: 'answerFetch'; readonly epochDelta: number; readonly count: number; readonly entryEpochDelta: number; readonly hwmDelta: number; readonly diverge: { epochDelta: number; offsetDelta: number } | null }
  | { readonly kind: 'grant'; readonly from: number }
  | { readonly kind: 'propose'; readonly size: number }
  | { readonly kind: 'persistLater' };

const delta = fc.oneof({ arbitrary: fc.constant(0), weight: 4 }, { arbitrary: fc.integer({ min: -2, max: 2 }), weight: 1 });
const peerArb = fc.constantFrom(...PEERS);
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('tick' as const), times: fc.integer({ min: 1, max: 12 }) }), weight: 3 },
  {
    arbitrary: fc.record({ kind: fc.constant('vote' as const), from: peerArb, epochDelta: fc.integer({ min: -1, max: 2 }), preVote: fc.boolean(), lastEpochDelta: delta, lastOffsetDelta: delta }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('voteResponse' as const), from: peerArb, epochDelta: delta, preVote: fc.boolean(), granted: fc.boolean(), leaderId: fc.constantFrom(-1, -1, ...PEERS) }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('begin' as const), from: peerArb, epochDelta: fc.integer({ min: -1, max: 1 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('end' as const), from: peerArb, epochDelta: delta, successors: fc.shuffledSubarray([1, ...PEERS]) }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('fetch' as const), from: fc.constantFrom(2, 3, 2, 3, 4, 9), epochDelta: delta, offsetDelta: fc.integer({ min: -4, max: 1 }), lastEpochDelta: delta }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('answerFetch' as const),
      epochDelta: fc.oneof({ arbitrary: fc.constant(0), weight: 5 }, { arbitrary: fc.constant(1), weight: 1 }),
      count: fc.integer({ min: 0, max: 3 }),
      entryEpochDelta: fc.integer({ min: -1, max: 0 }),
      hwmDelta: fc.integer({ min: -2, max: 3 }),
      diverge: fc.option(fc.record({ epochDelta: fc.integer({ min: -2, max: 0 }), offsetDelta: fc.integer({ min: -3, max: 0 }) }), { nil: null, freq: 4 }),
    }),
    weight: 6,
  },
  // A granted answer to whatever round the node is in, so runs reach candidate and leader often.
  { arbitrary: fc.record({ kind: fc.constant('grant' as const), from: fc.constantFrom(2, 3) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('propose' as const), size: fc.integer({ min: 0, max: 40 }) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('persistLater' as const) }), weight: 1 },
);

/** Runs `commands` against node 1 (voters 1,2,3; observers may fetch) and checks every Ready. */
function run(commands: readonly Command[], unsafe?: ReadonlySet<Mutation>): void {
  const node = new RaftNode(
    { id: 1, electionTimeoutTicks: 5, fetchTimeoutTicks: 10, fetchWaitTicks: 3, maxFetchBytes: 100, maxUncommittedBytes: 300, random: seeded(7), ...(unsafe ? { unsafe } : {}) },
    { hardState: FRESH, snapshot: null, entries: [], bootstrapVoters: [1, 2, 3] },
  );
  let persisted: HardState = FRESH;
  const votes = new Map<number, number>();
  const durable: Entry[] = [];
  let applied = 0;
  const sent: { lastFetch: FetchRequest | null } = { lastFetch: null };
  let held: Ready[] = [];
  let holdNext = false;

  const check = (r: Ready): void => {
    if (r.hardState !== null) {
      assert.ok(r.hardState.epoch >= persisted.epoch, 'epoch went back');
      if (r.hardState.epoch === persisted.epoch && persisted.votedFor !== -1) assert.equal(r.hardState.votedFor, persisted.votedFor, 'changed its vote within an epoch');
      persisted = r.hardState;
    }
    if (persisted.votedFor !== -1) {
      const earlier = votes.get(persisted.epoch);
      assert.ok(earlier === undefined || earlier === persisted.votedFor, 'voted twice in one epoch');
      votes.set(persisted.epoch, persisted.votedFor);
    }
    for (const m of r.messages) {
      const preVote = m.type === 'vote' && m.preVote;
      assert.equal(m.epoch, preVote ? persisted.epoch + 1 : persisted.epoch, `${m.type} sent in an epoch not yet persisted`);
      if (m.type === 'voteResponse' && m.granted && !m.preVote) assert.equal(persisted.votedFor, m.to, 'a granted vote not persisted first');
      if (m.type === 'fetch') sent.lastFetch = m;
    }
    if (r.truncateTo !== null) durable.splice(r.truncateTo);
    for (const e of r.entries) durable[e.offset] = e;
    for (const e of r.committed) {
      assert.equal(e.offset, applied, 'committed entries are contiguous');
      applied++;
    }
  };
  const persist = (r: Ready): void => {
    check(r);
    // Committed entries must already be on the disk from an earlier, confirmed Ready.
    for (const e of r.committed) assert.ok(!r.entries.includes(e) && !held.some((h) => h.entries.includes(e)), 'applied before durable');
    // A slow disk: once one write is held, later ones queue behind it (writes complete in order).
    if (holdNext || held.length > 0) held.push(r);
    else node.advance(r);
    holdNext = false;
  };
  const drain = (): void => {
    while (node.hasReady()) persist(node.ready());
  };
  const epoch = (): number => node.status().epoch;
  const epochAtEnd = (): number => durable[node.status().logEndOffset - 1]?.epoch ?? 0;

  for (const c of commands) {
    let m: Message | null = null;
    switch (c.kind) {
      case 'tick':
        for (let i = 0; i < c.times; i++) {
          node.tick();
          drain();
        }
        break;
      case 'vote': {
        const st = node.status();
        const lastEpoch = Math.max(0, (node.status().logEndOffset > 0 ? epochAtEnd() : 0) + c.lastEpochDelta);
        m = { type: 'vote', from: c.from, to: 1, epoch: Math.max(0, st.epoch + c.epochDelta), preVote: c.preVote, lastEpoch, lastOffset: Math.max(0, st.logEndOffset + c.lastOffsetDelta) };
        break;
      }
      case 'voteResponse':
        m = { type: 'voteResponse', from: c.from, to: 1, epoch: Math.max(0, epoch() + c.epochDelta), preVote: c.preVote, granted: c.granted, leaderId: c.leaderId };
        break;
      case 'grant': {
        const st = node.status();
        const preVote = st.role === 'prospective';
        m = { type: 'voteResponse', from: c.from, to: 1, epoch: st.epoch, preVote, granted: true, leaderId: -1 };
        break;
      }
      case 'begin':
        m = { type: 'beginQuorumEpoch', from: c.from, to: 1, epoch: Math.max(0, epoch() + c.epochDelta) };
        break;
      case 'end':
        m = { type: 'endQuorumEpoch', from: c.from, to: 1, epoch: Math.max(0, epoch() + c.epochDelta), preferredSuccessors: c.successors };
        break;
      case 'fetch': {
        const fetchOffset = node.status().logEndOffset + c.offsetDelta;
        const lastFetchedEpoch = (fetchOffset > 0 ? (durable[fetchOffset - 1]?.epoch ?? 0) : 0) + c.lastEpochDelta;
        m = { type: 'fetch', from: c.from, to: 1, epoch: Math.max(0, epoch() + c.epochDelta), fetchOffset, lastFetchedEpoch, maxBytes: 100, observer: c.from === 9 };
        break;
      }
      case 'answerFetch': {
        const f = sent.lastFetch;
        if (f === null) break;
        const at = f.epoch + c.epochDelta;
        const entryEpoch = Math.max(f.lastFetchedEpoch, at + c.entryEpochDelta);
        const entries = Array.from({ length: c.count }, (_, i) => entry(f.fetchOffset + i, entryEpoch, 'r'));
        m = {
          type: 'fetchResponse',
          from: f.to,
          to: 1,
          epoch: at,
          errorCode: 0,
          leaderId: f.to,
          fetchOffset: f.fetchOffset,
          lastFetchedEpoch: f.lastFetchedEpoch,
          entries: c.diverge === null ? entries : [],
          highWatermark: Math.max(0, f.fetchOffset + c.hwmDelta),
          divergingEpoch: c.diverge === null ? null : { epoch: Math.max(0, f.lastFetchedEpoch + c.diverge.epochDelta), endOffset: Math.max(0, f.fetchOffset + c.diverge.offsetDelta) },
          snapshotId: null,
        };
        break;
      }
      case 'propose':
        node.propose(new Uint8Array(c.size));
        break;
      case 'persistLater':
        holdNext = true;
        break;
    }
    if (m !== null) node.step(m);
    drain();
    if (held.length > 0 && c.kind === 'tick') {
      for (const r of held) node.advance(r);
      held = [];
      drain();
    }
    const s = node.status();
    assert.ok(s.highWatermark >= 0 && s.appliedOffset <= Math.max(s.highWatermark, s.logStartOffset));
    assert.ok(s.appliedOffset <= s.durableEndOffset || unsafe?.has('applyBeforeDurable'), 'applied past the durable end');
  }
}

describe('RaftNode properties under arbitrary input', () => {
  it('epoch monotonic, one persisted vote per epoch before its answer, contiguous durable commits, no throw', () => {
    fc.assert(fc.property(fc.array(commandArb, { minLength: 20, maxLength: 150, size: 'max' }), (commands) => run(commands)), { numRuns: 400 });
  });

  it('the voteTwice mutation is caught by the same property', () => {
    const found = fc.check(
      fc.property(fc.array(commandArb, { minLength: 20, maxLength: 150, size: 'max' }), (commands) => run(commands, new Set(['voteTwice']))),
      { numRuns: 2000 },
    );
    assert.ok(found.failed, 'voteTwice went unnoticed');
  });
});

describe('RaftLog.endOfEpoch', () => {
  it('answers the largest known epoch ≤ the asked one and where it ends, like a scan of the entries', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 30 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 30 }), (steps, asked, cut) => {
        let epoch = 1;
        const entries = steps.map((step, offset) => entry(offset, (epoch += step), ''));
        const log = new RaftLog(null, entries, [1]);
        log.truncate(Math.min(cut, log.endOffset));
        const kept = entries.slice(0, Math.min(cut, entries.length));
        const known = kept.filter((e) => e.epoch <= asked);
        const got = log.endOfEpoch(asked)!;
        if (known.length === 0) assert.deepEqual(got, { epoch: 0, endOffset: 0 });
        else {
          const e = known[known.length - 1]!.epoch;
          assert.deepEqual(got, { epoch: e, endOffset: kept.filter((x) => x.epoch <= e).length });
        }
      }),
      { numRuns: 500 },
    );
  });
});
