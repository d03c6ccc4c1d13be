// Scenarios for RaftNode.reportUnreachable, the transport's word that a peer's connection reset or
// was refused: a dead leader is replaced well within the fetch timeout, a reported follower grants
// pre-votes it would refuse while trusting its leader, and reports that do not concern a follower's
// leader, or that a live leader's answer contradicts, depose nobody.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message, NodeId, VoteResponse } from '../../../src/coordinator/raft/types.js';
import { Cluster, type NodeOptions } from './raft_fixture.js';

/** The fixture's fetch timeout: without a report, a follower waits this long for a dead leader. */
const FETCH_TIMEOUT = 20;

const epochOf = (c: Cluster, id: NodeId): number => c.node(id).status().epoch;

/** A three-voter cluster whose followers have all fetched from the leader (so they refuse pre-votes). */
function settled(observers: readonly NodeId[] = [], options: Record<NodeId, NodeOptions> = {}): { c: Cluster; leader: NodeId; followers: [NodeId, NodeId] } {
  const c = new Cluster([1, 2, 3], options, observers);
  const leader = c.elect();
  c.tickUntil(() => [1, 2, 3, ...observers].every((id) => c.node(id).status().highWatermark === 1));
  const followers = [1, 2, 3].filter((id) => id !== leader) as [NodeId, NodeId];
  return { c, leader, followers };
}

/** Hands `to` a pre-vote from `from` for the next epoch, with `from`'s log, and returns the answer. */
function preVoteAnswer(c: Cluster, from: NodeId, to: NodeId): VoteResponse {
  const s = c.node(from).status();
  const lastEpoch = epochOf(c, from);
  const before = c.delivered.length;
  c.node(to).step({ type: 'vote', from, to, epoch: s.epoch + 1, preVote: true, lastEpoch, lastOffset: s.logEndOffset });
  c.drain();
  const answer = c.delivered.slice(before).find((m): m is VoteResponse => m.type === 'voteResponse' && m.from === to && m.to === from);
  assert.ok(answer !== undefined, `node ${to} answered node ${from}'s pre-vote`);
  return answer;
}

/** Election timeout 40 ticks (slot 2): a round retried by backoff stands out from one left to the timer. */
const SLOW_TIMERS: NodeOptions = { electionTimeoutTicks: 40, fetchTimeoutTicks: 80 };
const SLOW: Record<NodeId, NodeOptions> = { 1: SLOW_TIMERS, 2: SLOW_TIMERS, 3: SLOW_TIMERS };
/** Well under the 40-tick election timeout: a few slots and round trips. */
const RETRY_BOUND = 15;

const preVotesFrom = (messages: readonly Message[], id: NodeId): Message[] => messages.filter((m) => m.type === 'vote' && m.preVote && m.from === id);

describe('RaftNode unreachable reports', () => {
  it('a follower told its leader is unreachable grants the pre-vote it refused while trusting it', () => {
    const { c, leader, followers: [a, b] } = settled();
    assert.equal(preVoteAnswer(c, b, a).granted, false, 'a follower that fetched from its leader refuses');
    c.node(a).reportUnreachable(leader);
    assert.equal(preVoteAnswer(c, b, a).granted, true, 'after the report it grants');
  });

  it('the survivors of a dead leader elect a successor within a few ticks, in one epoch, not after the fetch timeout', () => {
    const { c, leader, followers } = settled();
    const epoch = epochOf(c, leader);
    c.crash(leader);
    for (const id of followers) c.node(id).reportUnreachable(leader);
    c.drain();
    c.tickUntil(() => c.leaders().length === 1 && followers.every((id) => c.node(id).status().leaderId === c.leaders()[0]), FETCH_TIMEOUT / 2);
    assert.equal(epochOf(c, c.leaders()[0]!), epoch + 1, 'no split vote: the lowest-ranked survivor canvassed first');
  });

  it('a spurious report about a live leader: the pre-vote fails, the follower returns and refuses pre-votes again', () => {
    const { c, leader, followers: [a, b] } = settled();
    const epoch = epochOf(c, leader);
    const before = c.delivered.length;
    c.node(a).reportUnreachable(leader);
    c.tickUntil(() => preVotesFrom(c.delivered.slice(before), a).length > 0, FETCH_TIMEOUT / 2);
    c.tick(3 * FETCH_TIMEOUT);
    assert.deepEqual([1, 2, 3].map((id) => epochOf(c, id)), [epoch, epoch, epoch]);
    assert.deepEqual(c.leaders(), [leader]);
    assert.equal(c.node(a).status().role, 'follower');
    assert.equal(preVoteAnswer(c, b, a).granted, false, 'trust is back after the next successful fetch');
  });

  it('a report followed by the leader\'s fetch answer cancels the pre-vote', () => {
    const { c, leader, followers } = settled();
    // The second-ranked survivor waits past one slot, long enough for the leader's answer to come.
    const b = Math.max(...followers);
    const before = c.delivered.length;
    c.node(b).reportUnreachable(leader);
    c.propose(leader, 'x');
    assert.equal(c.node(b).status().logEndOffset, 2, 'the follower fetched again at once and got the entry');
    c.tick(FETCH_TIMEOUT / 2);
    assert.deepEqual(preVotesFrom(c.delivered.slice(before), b), []);
    assert.equal(c.node(b).status().role, 'follower');
  });

  it('reports about a non-leader, or to the leader, change nothing', () => {
    const { c, leader, followers: [a, b] } = settled();
    const epoch = epochOf(c, leader);
    const before = c.delivered.length;
    c.node(a).reportUnreachable(b);
    c.node(leader).reportUnreachable(a);
    c.node(a).reportUnreachable(-1);
    c.node(a).reportUnreachable(a);
    c.drain();
    assert.equal(preVoteAnswer(c, b, a).granted, false);
    c.tick(FETCH_TIMEOUT / 2);
    assert.deepEqual(c.delivered.slice(before).filter((m) => m.type === 'vote' && m.from !== b), []);
    assert.deepEqual(c.leaders(), [leader]);
    assert.equal(epochOf(c, a), epoch);
  });

  it('an observer told its leader is unreachable asks the voters and follows the new leader at once', () => {
    const { c, leader, followers } = settled([4]);
    c.crash(leader);
    for (const id of followers) c.node(id).reportUnreachable(leader);
    c.drain();
    c.tickUntil(() => c.leaders().length === 1, FETCH_TIMEOUT / 2);
    const next = c.leaders()[0]!;
    assert.equal(c.node(4).status().leaderId, leader, 'without a report the observer still waits on the dead leader');
    c.node(4).reportUnreachable(leader);
    c.tickUntil(() => c.node(4).status().leaderId === next, 5);
    assert.equal(c.node(4).status().role, 'observer');
  });

  it('a pre-vote refused by a survivor not yet told (it still trusts the dead leader) is retried within a backoff, not an election timeout', () => {
    const { c, leader, followers: [a, b] } = settled([], SLOW);
    // `a` holds an entry `b` never got: once told, `b` cannot win, and `a` must canvass again.
    c.drop = (m) => m.type === 'fetchResponse' && m.to === b && m.entries.length > 0;
    c.propose(leader, 'x');
    c.drop = () => false;
    c.crash(leader);
    c.node(a).reportUnreachable(leader);
    const before = c.delivered.length;
    c.tickUntil(() => c.delivered.slice(before).some((m) => m.type === 'voteResponse' && m.from === b && m.to === a), 5);
    assert.ok(c.delivered.slice(before).some((m) => m.type === 'voteResponse' && m.from === b && !m.granted), '`b` refused: it has not heard yet');
    c.node(b).reportUnreachable(leader);
    c.tickUntil(() => c.leaders().length === 1, RETRY_BOUND);
    assert.deepEqual(c.leaders(), [a], 'the survivor with the longer log leads');
  });

  it('survivors whose pre-votes crossed split the vote, and retry after a short backoff', () => {
    const { c, leader, followers: [a, b] } = settled([], SLOW);
    const epoch = epochOf(c, leader);
    c.crash(leader);
    // Both canvass before either hears the other (a stalled event loop defeats the rank stagger).
    const held: Message[] = [];
    c.drop = (m) => {
      if (m.type !== 'vote') return false;
      held.push(m);
      return true;
    };
    for (const id of [a, b]) c.node(id).reportUnreachable(leader);
    c.tickUntil(() => [a, b].every((id) => c.node(id).status().role === 'prospective'), 10);
    c.drop = () => false;
    for (const m of held) if (m.to !== leader) c.node(m.to).step(m);
    c.drain();
    assert.deepEqual([a, b].map((id) => c.node(id).status().role), ['candidate', 'candidate'], 'each granted the other\'s pre-vote, then voted for itself');
    assert.deepEqual(c.leaders(), []);
    c.tickUntil(() => c.leaders().length === 1, RETRY_BOUND);
    assert.ok(epochOf(c, c.leaders()[0]!) >= epoch + 2);
  });
});
