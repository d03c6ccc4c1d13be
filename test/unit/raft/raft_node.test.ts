// Paper-style scenarios for the Raft core, driven by hand through a small message pump: elections,
// pre-vote, check-quorum, transfer, replication and commit, the Figure 8 rule, divergence,
// snapshots, membership, observers, flow control and local durability.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { RaftNode, type Mutation } from '../../../src/coordinator/raft/raft_node.js';
import type { Message } from '../../../src/coordinator/raft/types.js';
import { Cluster, entry, text } from './raft_fixture.js';

const epochOf = (c: Cluster, id: number): number => c.node(id).status().epoch;

/**
 * Figure 8 (c) of the Raft paper, in KRaft terms: node 1 led epoch 2 and wrote offset 1 to node 2;
 * node 5 led epoch 3 and wrote its own offset 1. Node 1 now wins epoch 4 and copies its old entry
 * to node 3, one entry per fetch, while its epoch-4 leaderChange entry reaches no one: a majority
 * holds offset 1, yet committing it would let node 5 (log epoch 3) win and overwrite it.
 */
function figure8(unsafe?: ReadonlySet<Mutation>): Cluster {
  const base = [entry(0, 1, '', 'leaderChange')];
  const at3 = { epoch: 3, votedFor: -1, leaderId: -1 };
  const slow = { electionTimeoutTicks: 1000, fetchTimeoutTicks: 1000 };
  const c = new Cluster([1, 2, 3, 4, 5], {
    1: { electionTimeoutTicks: 10, maxFetchBytes: 1, ...(unsafe ? { unsafe } : {}), restore: { hardState: at3, entries: [...base, entry(1, 2, 'x')] } },
    2: { ...slow, fetchTimeoutTicks: 300, maxFetchBytes: 1, restore: { hardState: at3, entries: [...base, entry(1, 2, 'x')] } },
    3: { ...slow, fetchTimeoutTicks: 2000, maxFetchBytes: 1, restore: { hardState: at3, entries: base } },
    4: { ...slow, restore: { hardState: at3, entries: base } },
    5: { electionTimeoutTicks: 20, maxFetchBytes: 1, restore: { hardState: at3, entries: [...base, entry(1, 3, 'y')] } },
  });
  c.cut(1, 4);
  c.cut(1, 5);
  c.drop = (m) => m.type === 'fetchResponse' && m.entries.some((e) => e.epoch === 4);
  c.tickUntil(() => c.node(1).status().role === 'leader', 200);
  assert.equal(epochOf(c, 1), 4);
  c.tickUntil(() => c.node(3).status().logEndOffset === 2, 100);
  c.tick(20);
  return c;
}

describe('RaftNode elections', () => {
  it('elects one leader that every voter follows, and commits its leaderChange entry everywhere', () => {
    const c = new Cluster([1, 2, 3]);
    const leader = c.elect();
    const { epoch } = c.node(leader).status();
    c.tickUntil(() => [1, 2, 3].every((id) => c.node(id).status().highWatermark === 1));
    for (const id of [1, 2, 3]) {
      assert.deepEqual(c.appliedText(id), [`0@${epoch}:`]);
      assert.equal(c.disks.get(id)!.hardState.epoch, epoch);
      assert.equal(c.node(id).status().role, id === leader ? 'leader' : 'follower');
    }
    // Every vote granted was persisted: the voters that granted hold votedFor = leader in that epoch.
    const granted = c.delivered.filter((m) => m.type === 'voteResponse' && !m.preVote && m.granted && m.epoch === epoch);
    for (const m of granted) assert.equal(c.disks.get(m.from)!.hardState.votedFor, leader);
  });

  it('a follower that hears from its leader refuses pre-votes, so a cut-off voter cannot move the epoch', () => {
    const c = new Cluster([1, 2, 3]);
    const leader = c.elect();
    const [lonely, other] = [1, 2, 3].filter((id) => id !== leader) as [number, number];
    const epoch = epochOf(c, leader);
    c.cut(lonely, leader);
    const before = c.delivered.length;
    c.tickUntil(() => c.delivered.some((m) => m.type === 'vote' && m.from === lonely && m.to === other));
    c.tick(100);
    const after = c.delivered.slice(before);
    const answers = after.filter((m): m is Extract<Message, { type: 'voteResponse' }> => m.type === 'voteResponse' && m.to === lonely);
    assert.ok(answers.length > 0 && answers.every((m) => m.preVote && !m.granted && m.leaderId === leader));
    assert.ok(!after.some((m) => m.type === 'vote' && !m.preVote), 'no real election started');
    assert.deepEqual([1, 2, 3].map((id) => epochOf(c, id)), [epoch, epoch, epoch]);
    assert.notEqual(c.node(lonely).status().role, 'candidate');
    c.heal();
    c.tickUntil(() => c.node(lonely).status().role === 'follower');
    assert.equal(c.leaders()[0], leader);
  });

  it('skipPreVote (unsafe) lets the cut-off voter bump the epoch and unseat the leader', () => {
    const c = new Cluster([1, 2, 3], { 1: { unsafe: new Set(['skipPreVote']) }, 2: { unsafe: new Set(['skipPreVote']) }, 3: { unsafe: new Set(['skipPreVote']) } });
    const leader = c.elect();
    const lonely = [1, 2, 3].find((id) => id !== leader)!;
    const epoch = epochOf(c, leader);
    c.cut(lonely, leader);
    c.tick(200);
    assert.ok(epochOf(c, lonely) > epoch + 1, 'the cut-off node campaigns in ever higher epochs');
  });

  it('check-quorum: a leader cut off from the majority resigns, and the rest elect a new one', () => {
    const c = new Cluster([1, 2, 3]);
    const old = c.elect();
    c.isolate(old);
    // Within 1.5x the fetch timeout (20 ticks) plus slack, the isolated leader steps down on its own.
    c.tickUntil(() => c.node(old).status().role !== 'leader', 40);
    assert.equal(c.node(old).status().role, 'resigned');
    c.tickUntil(() => c.leaders().some((id) => id !== old));
    c.heal();
    const now = c.elect();
    assert.notEqual(now, old);
  });

  it('transfers leadership to a caught-up voter, which campaigns at once', () => {
    const c = new Cluster([1, 2, 3], { 1: { electionTimeoutTicks: 5 }, 2: { electionTimeoutTicks: 1000 }, 3: { electionTimeoutTicks: 1000 } });
    assert.equal(c.elect(), 1);
    c.tickUntil(() => c.node(3).status().highWatermark === 1);
    const epoch = epochOf(c, 1);
    assert.equal(c.node(1).transferLeadership(3), true);
    assert.equal(c.node(1).transferLeadership(2), false, 'one transfer at a time');
    c.drain();
    // No election timeout has to pass (1000 ticks here): the successor wins within a few ticks.
    c.tickUntil(() => c.node(3).status().role === 'leader', 10);
    assert.equal(epochOf(c, 3), epoch + 1);
    const end = c.delivered.filter((m) => m.type === 'endQuorumEpoch');
    assert.ok(end.length > 0 && end.every((m) => m.type === 'endQuorumEpoch' && m.preferredSuccessors[0] === 3));
    assert.equal(c.elect(), 3);
  });

  it('a sole voter leads from its first tick, fresh or restarted after leading, without sending anything', () => {
    const c = new Cluster([1], { 1: { electionTimeoutTicks: 1000 } });
    c.tick();
    assert.equal(c.node(1).status().role, 'leader');
    assert.equal(c.node(1).status().highWatermark, 1, 'its leaderChange entry commits on its own disk');
    assert.equal(c.disks.get(1)!.hardState.votedFor, 1);
    const epoch = epochOf(c, 1);
    c.crash(1);
    c.start(1);
    assert.equal(c.node(1).status().role, 'resigned');
    c.tick();
    assert.equal(c.node(1).status().role, 'leader');
    assert.equal(epochOf(c, 1), epoch + 1);
    assert.deepEqual(c.delivered, []);
  });

  it('a voter of three still waits out its election timeout before canvassing', () => {
    const c = new Cluster([1, 2, 3], { 1: { electionTimeoutTicks: 1000 }, 2: { electionTimeoutTicks: 1000 }, 3: { electionTimeoutTicks: 1000 } });
    c.tick(999);
    assert.deepEqual(c.leaders(), []);
    assert.deepEqual(c.delivered, []);
  });
});

describe('RaftNode replication and commit', () => {
  it('replicates proposals to every voter and applies them in order once a majority holds them', () => {
    const c = new Cluster([1, 2, 3]);
    const leader = c.elect();
    const epoch = epochOf(c, leader);
    for (let i = 0; i < 10; i++) c.propose(leader, `v${i}`);
    c.tickUntil(() => [1, 2, 3].every((id) => c.node(id).status().highWatermark === 11));
    const expected = [`0@${epoch}:`, ...Array.from({ length: 10 }, (_, i) => `${i + 1}@${epoch}:v${i}`)];
    for (const id of [1, 2, 3]) assert.deepEqual(c.appliedText(id), expected);
  });

  it('a minority holding an entry does not commit it', () => {
    const c = new Cluster([1, 2, 3]);
    const leader = c.elect();
    c.tickUntil(() => c.node(leader).status().highWatermark === 1);
    for (const id of [1, 2, 3]) if (id !== leader) c.cut(leader, id);
    c.propose(leader, 'alone');
    c.tick(5);
    assert.equal(c.node(leader).status().highWatermark, 1);
    assert.equal(c.appliedText(leader).length, 1);
  });

  it('the leader counts itself only up to what its disk confirmed, and applies nothing it has not made durable', () => {
    const c = new Cluster([1, 2, 3]);
    const leader = c.elect();
    c.tickUntil(() => c.node(leader).status().highWatermark === 1);
    const follower = [1, 2, 3].find((id) => id !== leader)!;
    c.crash([1, 2, 3].find((id) => id !== leader && id !== follower)!);
    c.stall(leader);
    c.propose(leader, 'x');
    c.tick(10);
    // One follower alone holds offset 1 durably: with the leader's write unconfirmed there is no majority.
    assert.equal(c.node(leader).status().highWatermark, 1);
    assert.equal(c.node(follower).status().logEndOffset, 2);
    c.unstall(leader);
    c.tick(2);
    assert.equal(c.node(leader).status().highWatermark, 2);
    assert.deepEqual(c.appliedText(leader).slice(1), [`1@${epochOf(c, leader)}:x`]);
  });

  it('a follower applies committed entries only once its own disk confirmed them', () => {
    const c = new Cluster([1, 2, 3]);
    const leader = c.elect();
    c.tickUntil(() => [1, 2, 3].every((id) => c.node(id).status().highWatermark === 1));
    const slow = [1, 2, 3].find((id) => id !== leader)!;
    // It lags, so its next fetch brings entries the high watermark already covers.
    c.isolate(slow);
    c.propose(leader, 'a');
    c.propose(leader, 'b');
    c.tickUntil(() => c.node(leader).status().highWatermark === 3);
    c.stall(slow);
    c.heal();
    c.tickUntil(() => c.node(slow).status().logEndOffset === 3 && c.node(slow).status().highWatermark === 3);
    c.tick(5);
    assert.equal(c.appliedText(slow).length, 1, 'nothing applied past the durable end');
    c.unstall(slow);
    c.tickUntil(() => c.appliedText(slow).length === 3);
  });

  it('applyBeforeDurable (unsafe) applies on a follower whose disk has not confirmed the entries', () => {
    const unsafe = new Set<Mutation>(['applyBeforeDurable']);
    const c = new Cluster([1, 2, 3], { 1: { unsafe }, 2: { unsafe }, 3: { unsafe } });
    const leader = c.elect();
    c.tickUntil(() => [1, 2, 3].every((id) => c.node(id).status().highWatermark === 1));
    const slow = [1, 2, 3].find((id) => id !== leader)!;
    c.isolate(slow);
    c.propose(leader, 'a');
    c.tickUntil(() => c.node(leader).status().highWatermark === 2);
    c.stall(slow);
    c.heal();
    c.tickUntil(() => c.node(slow).status().logEndOffset === 2);
    assert.equal(c.appliedText(slow).length, 2);
    assert.equal(c.node(slow).status().durableEndOffset, 1);
  });

  it('the Figure 8 rule: entries of an older epoch commit only once the new leader\'s epoch start offset does', () => {
    const c = figure8();
    assert.equal(c.node(1).status().highWatermark, 0, 'offset 1 is on a majority but must not commit');
    assert.deepEqual(c.appliedText(1), []);
    // Node 1 crashes; node 5 wins with its epoch-3 log and replaces offset 1 everywhere.
    c.crash(1);
    c.drop = () => false;
    c.tickUntil(() => c.node(5).status().role === 'leader' && c.node(5).status().highWatermark >= 3, 5000);
    c.tickUntil(() => [2, 3, 4].every((id) => c.node(id).status().highWatermark === c.node(5).status().highWatermark));
    for (const id of [2, 3, 4, 5]) assert.equal(text(c.disks.get(id)!.entries[1]!), '1@3:y');
  });

  it('countOldTermReplicas (unsafe) commits the old entry early, and node 5 later overwrites it', () => {
    const c = figure8(new Set(['countOldTermReplicas']));
    assert.equal(c.node(1).status().highWatermark, 2);
    assert.deepEqual(c.appliedText(1), ['0@1:', '1@2:x']);
    c.crash(1);
    c.drop = () => false;
    c.tickUntil(() => c.node(5).status().role === 'leader' && c.node(5).status().highWatermark >= 3, 5000);
    assert.equal(c.appliedText(5)[1], '1@3:y', 'a committed entry was replaced');
  });

  it('a diverging follower truncates to the common prefix in one round trip', () => {
    const base = [entry(0, 1, '', 'leaderChange'), entry(1, 1, 'a')];
    const at3 = { epoch: 3, votedFor: -1, leaderId: -1 };
    const good = [...base, entry(2, 3, 'b')];
    const c = new Cluster([1, 2, 3], {
      1: { electionTimeoutTicks: 5, restore: { hardState: at3, entries: good } },
      2: { electionTimeoutTicks: 1000, restore: { hardState: at3, entries: good } },
      3: { electionTimeoutTicks: 1000, restore: { hardState: at3, entries: [...base, entry(2, 2, 'junk'), entry(3, 2, 'junk')] } },
    });
    assert.equal(c.elect(), 1);
    c.tickUntil(() => c.node(3).status().highWatermark === 4);
    const diverging = c.delivered.filter((m) => m.type === 'fetchResponse' && m.to === 3 && m.divergingEpoch !== null);
    assert.equal(diverging.length, 1);
    assert.deepEqual(c.disks.get(3)!.truncations, [2]);
    assert.deepEqual(c.disks.get(3)!.entries.map(text), c.disks.get(1)!.entries.map(text));
  });
});

describe('RaftNode snapshots', () => {
  it('sends a lagging follower the snapshot in chunks, then the entries after it', () => {
    const c = new Cluster([1, 2, 3], { 1: { electionTimeoutTicks: 5, maxFetchBytes: 64 }, 2: { electionTimeoutTicks: 1000, maxFetchBytes: 64 }, 3: { electionTimeoutTicks: 1000, maxFetchBytes: 64 } });
    assert.equal(c.elect(), 1);
    c.tickUntil(() => c.node(3).status().highWatermark === 1);
    c.isolate(3);
    for (let i = 0; i < 20; i++) c.propose(1, `v${i}`);
    c.tickUntil(() => c.node(1).status().highWatermark === 21);
    const state = new TextEncoder().encode('the state machine at offset 21, long enough for several chunks of 64 bytes each'.repeat(3));
    c.node(1).compact(21, state);
    assert.equal(c.node(1).status().logStartOffset, 21);
    c.propose(1, 'after');
    c.heal();
    c.tickUntil(() => c.node(3).status().highWatermark === 22);
    const chunks = c.delivered.filter((m) => m.type === 'fetchSnapshot' && m.from === 3);
    assert.ok(chunks.length >= 4, `${chunks.length} chunk requests`);
    const disk = c.disks.get(3)!;
    assert.deepEqual(disk.snapshot!.data, state);
    assert.deepEqual(disk.snapshot!.meta.id, { endOffset: 21, epoch: epochOf(c, 1) });
    const e = epochOf(c, 1);
    assert.deepEqual(c.appliedText(3), [`0@${e}:`, 'snapshot@21', `21@${e}:after`]);
    assert.equal(c.node(3).status().logStartOffset, 21);
  });

  it('refuses to compact past what the state machine has applied', () => {
    const c = new Cluster([1]);
    c.elect();
    c.tickUntil(() => c.node(1).status().appliedOffset === 1);
    assert.throws(() => c.node(1).compact(2, new Uint8Array(0)), RangeError);
  });
});

describe('RaftNode membership and observers', () => {
  it('adds a caught-up observer as a voter, one change at a time, and a removed leader hands off after commit', () => {
    const c = new Cluster([1, 2, 3], { 1: { electionTimeoutTicks: 5 }, 2: { electionTimeoutTicks: 1000 }, 3: { electionTimeoutTicks: 1000 } }, [4]);
    assert.equal(c.elect(), 1);
    c.tickUntil(() => c.node(4).status().highWatermark === 1);
    assert.equal(c.node(4).status().role, 'observer');
    const never = c.node(1).addVoter(9);
    assert.deepEqual(never, { ok: false, errorCode: ErrorCode.REQUEST_TIMED_OUT, leaderId: 1 }, 'a node that never fetched has not caught up');
    assert.equal((c.node(1).addVoter(2) as { errorCode: number }).errorCode, ErrorCode.DUPLICATE_VOTER);
    const added = c.node(1).addVoter(4);
    assert.ok(added.ok);
    assert.equal((c.node(1).removeVoter(2) as { errorCode: number }).errorCode, ErrorCode.REQUEST_TIMED_OUT, 'the first change is not committed yet');
    c.drain();
    c.tickUntil(() => c.node(4).status().role === 'follower' && c.node(1).status().highWatermark > added.offset);
    for (const id of [1, 2, 3, 4]) assert.deepEqual(c.node(id).status().voters, [1, 2, 3, 4]);
    assert.equal((c.node(1).removeVoter(7) as { errorCode: number }).errorCode, ErrorCode.VOTER_NOT_FOUND);
    const removed = c.node(1).removeVoter(1);
    assert.ok(removed.ok);
    c.drain();
    c.tickUntil(() => c.node(1).status().role === 'observer');
    const next = c.elect();
    assert.notEqual(next, 1);
    assert.deepEqual(c.node(next).status().voters, [2, 3, 4]);
    assert.equal(c.node(1).status().role, 'observer');
  });

  it('a leader that removed itself and crashed before the removal committed campaigns again to commit it', () => {
    // Found by simulation seed 2918 (`node dist/test/sim/raft/replay.js --seed 2918`): voters
    // [1,2]; leader 1 removes itself, the removal reaches
    // only its own disk, it crashes. Voter 2 needs 1's vote, which a longer log refuses; node 1,
    // outside its own latest set, must campaign or the quorum is stuck for good.
    const c = new Cluster([1, 2], { 1: { electionTimeoutTicks: 5 }, 2: { electionTimeoutTicks: 1000 } });
    assert.equal(c.elect(), 1);
    c.tickUntil(() => c.node(1).status().highWatermark === 1);
    c.drop = (m) => m.type === 'fetchResponse' && m.entries.some((e) => e.kind === 'voters');
    const removed = c.node(1).removeVoter(1);
    assert.ok(removed.ok);
    c.drain();
    assert.equal(c.disks.get(1)!.entries.length, 2, 'the removal is durable on node 1');
    c.crash(1);
    c.drop = () => false;
    c.start(1);
    c.tickUntil(() => c.node(2).status().role === 'leader' && c.node(2).status().highWatermark > removed.offset, 1000);
    assert.deepEqual(c.node(2).status().voters, [2]);
    c.tickUntil(() => c.node(1).status().role === 'observer', 200);
  });

  it('a node whose stale log leaves it out of the voters still grants a candidate whose newer set names it', () => {
    // Simulation seed 3678: node 3's log ends before the entry that added it; the candidate's set
    // [2,3] needs its vote, and refusing as an observer stalled the quorum for good.
    const node = new RaftNode(
      { id: 3, electionTimeoutTicks: 10, fetchTimeoutTicks: 20, fetchWaitTicks: 5, maxFetchBytes: 1024, maxUncommittedBytes: 1024, random: () => 0.5 },
      { hardState: { epoch: 1, votedFor: -1, leaderId: -1 }, snapshot: null, entries: [entry(0, 1, '', 'leaderChange')], bootstrapVoters: [1, 2] },
    );
    assert.equal(node.status().role, 'observer');
    const ask = { type: 'vote', from: 1, to: 3, epoch: 2, lastEpoch: 1, lastOffset: 5 } as const;
    node.step({ ...ask, preVote: true });
    node.step({ ...ask, preVote: false });
    const r = node.ready();
    const answers = r.messages.filter((m) => m.type === 'voteResponse');
    assert.deepEqual(answers.map((m) => m.type === 'voteResponse' && m.granted), [true, true]);
    assert.deepEqual(r.hardState, { epoch: 2, votedFor: 1, leaderId: -1 });
  });

  it('an observer whose leader went silent grants pre-votes again, having fetched from it before', () => {
    // Simulation seed 5492: a stale fetchedFromLeader flag made such an observer refuse forever.
    const c = new Cluster([1, 2], { 1: { electionTimeoutTicks: 5 }, 2: { electionTimeoutTicks: 1000 } }, [3]);
    assert.equal(c.elect(), 1);
    c.tickUntil(() => c.node(3).status().highWatermark === 1);
    c.crash(1);
    c.cut(2, 3);
    c.tickUntil(() => c.node(3).status().leaderId === -1, 200);
    const { epoch } = c.node(3).status();
    c.node(3).step({ type: 'vote', from: 2, to: 3, epoch: epoch + 1, preVote: true, lastEpoch: epoch, lastOffset: 5 });
    const answer = c.node(3).ready().messages.find((m) => m.type === 'voteResponse');
    assert.ok(answer?.type === 'voteResponse' && answer.granted);
  });

  it('a leader that resigned names no leader once it canvasses, so fetchers stop coming back to it', () => {
    // Simulation seed 3678: resigned, then prospective, it kept naming itself in fetch refusals.
    const c = new Cluster([1, 2, 3], { 1: { electionTimeoutTicks: 5 }, 2: { electionTimeoutTicks: 1000 }, 3: { electionTimeoutTicks: 1000 } });
    assert.equal(c.elect(), 1);
    c.isolate(1);
    c.tickUntil(() => c.node(1).status().role === 'prospective', 500);
    assert.equal(c.node(1).status().leaderId, -1);
  });

  it('observers replicate but never count toward the commit nor vote', () => {
    const c = new Cluster([1, 2], { 1: { electionTimeoutTicks: 5 }, 2: { electionTimeoutTicks: 1000 } }, [3]);
    assert.equal(c.elect(), 1);
    c.tickUntil(() => c.node(3).status().highWatermark === 1);
    c.isolate(2);
    c.propose(1, 'x');
    c.tickUntil(() => c.node(3).status().logEndOffset === 2);
    c.tick(10);
    assert.equal(c.node(1).status().highWatermark, 1, 'voter 2 is missing, the observer does not replace it');
    const replica = c.node(1).status().replicas.find((r) => r.id === 3)!;
    assert.deepEqual([replica.voter, replica.logEndOffset], [false, 2]);
    // A long silence: the observer never campaigns, and refuses pre-votes sent to it.
    c.crash(1);
    c.heal();
    c.tick(200);
    assert.equal(c.node(3).status().role, 'observer');
    assert.ok(!c.delivered.some((m) => m.type === 'vote' && m.from === 3));
    const asked = c.delivered.filter((m) => m.type === 'voteResponse' && m.from === 3);
    assert.ok(asked.every((m) => m.type === 'voteResponse' && !m.granted));
  });
});

describe('RaftNode flow control', () => {
  it('refuses proposals past the uncommitted byte limit and caps fetch responses at maxFetchBytes', () => {
    const opts = { maxUncommittedBytes: 400, maxFetchBytes: 150 };
    const c = new Cluster([1, 2, 3], { 1: { ...opts, electionTimeoutTicks: 5 }, 2: { ...opts, electionTimeoutTicks: 1000 }, 3: { ...opts, electionTimeoutTicks: 1000 } });
    assert.equal(c.elect(), 1);
    c.tickUntil(() => c.node(1).status().highWatermark === 1);
    c.cut(1, 2);
    c.cut(1, 3);
    const payload = new Uint8Array(76); // 100 bytes with the entry header
    const results = Array.from({ length: 6 }, () => c.node(1).propose(payload));
    assert.deepEqual(results.map((r) => r.ok), [true, true, true, true, false, false]);
    assert.deepEqual(results[4], { ok: false, errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, leaderId: 1 });
    c.heal();
    c.tickUntil(() => c.node(1).status().highWatermark === 5);
    assert.ok(c.node(1).propose(payload).ok, 'room again once committed');
    c.tick(5);
    for (const m of c.delivered) {
      if (m.type !== 'fetchResponse' || m.entries.length < 2) continue;
      assert.ok(m.entries.reduce((n, e) => n + e.data.byteLength + 24, 0) <= 150);
    }
    assert.ok(c.delivered.some((m) => m.type === 'fetchResponse' && m.entries.length === 1 && m.entries[0]!.data.byteLength === 76));
  });

  it('refuses proposals on a follower with the leader as hint', () => {
    const c = new Cluster([1, 2, 3], { 1: { electionTimeoutTicks: 5 }, 2: { electionTimeoutTicks: 1000 }, 3: { electionTimeoutTicks: 1000 } });
    c.elect();
    assert.deepEqual(c.node(2).propose(new Uint8Array(1)), { ok: false, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: 1 });
  });
});
