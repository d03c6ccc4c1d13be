// The invariants the Raft simulation asserts after every event: election safety, one vote per
// epoch, log matching, leader completeness, state-machine safety (including "applied only once
// durable"), monotonic commit and persisted epoch, and the driver contract (nothing sent before
// the HardState it depends on), all stated over the voter set in force (the latest `voters` entry
// a log holds, KIP-853): a leader won a majority of the voters its log held, a commit was durable
// on a majority of them, and voter sets change one voter at a time, never with an earlier change
// uncommitted. Logs are compared by a hash chain: an entry's chain value covers
// it and every entry before it, so two logs match up to an offset iff their chains agree there.
// Tests only, one thread.
import type { Entry, HardState, Message, NodeId } from '../../../src/coordinator/raft/types.js';
import { decodeVoters } from '../../../src/coordinator/raft/entry_batches.js';

export type Invariant =
  | 'electionSafety' | 'singleVote' | 'logMatching' | 'leaderCompleteness' | 'stateMachineSafety'
  | 'applyDurable' | 'monotonicCommit' | 'monotonicEpoch' | 'persistBeforeSend' | 'driverContract' | 'liveness' | 'noThrow'
  | 'electionQuorum' | 'commitQuorum' | 'membershipChange';

export class InvariantViolation extends Error {
  constructor(readonly invariant: Invariant, readonly detail: string) {
    super(`${invariant}: ${detail}`);
    this.name = 'InvariantViolation';
  }
}

const KIND_CODE: Record<Entry['kind'], number> = { data: 1, leaderChange: 2, voters: 3 };

/** Chain value of `e` on top of `prev`: two FNV-1a lanes folded into one safe integer. */
export function chainOf(prev: number, e: Entry): number {
  let a = (prev % 0x100000000) ^ 0x811c9dc5;
  let b = Math.floor(prev / 0x100000000) ^ 0x050c5d1f;
  const mix = (x: number): void => {
    a = Math.imul(a ^ x, 0x01000193);
    b = Math.imul(b ^ x, 0x01000197) ^ (a >>> 13);
  };
  mix(e.offset);
  mix(e.epoch);
  mix(KIND_CODE[e.kind]);
  mix(e.data.length);
  for (let i = 0; i < e.data.length; i++) mix(e.data[i] as number);
  return (a >>> 0) + (b & 0x1fffff) * 0x100000000;
}

/** What one node's core holds in memory, rebuilt from its Readys (the core's log is private). */
export class MirrorLog {
  start = 0;
  /** Chain value just before `start` (0 for an empty prefix). */
  startChain = 0;
  private entries: Entry[] = [];
  private chains: number[] = [];
  /** Voters in force below `start` (the snapshot's, or the bootstrap set). */
  private baseVoters: readonly NodeId[] = [];
  /** The `voters` entries this log holds, ascending. */
  private votersChanges: { readonly offset: number; readonly voters: readonly NodeId[] }[] = [];

  get end(): number {
    return this.start + this.entries.length;
  }

  /** The chain up to and including `offset`, for offsets in [start - 1, end). */
  chainAt(offset: number): number | undefined {
    if (offset === this.start - 1) return this.startChain;
    return this.chains[offset - this.start];
  }

  entryAt(offset: number): Entry | undefined {
    return this.entries[offset - this.start];
  }

  /** The voter set in force at the log end: effective on append, so uncommitted changes count. */
  get voters(): readonly NodeId[] {
    return this.votersChanges[this.votersChanges.length - 1]?.voters ?? this.baseVoters;
  }

  /** Offset of the last `voters` entry this log holds, or -1. */
  get lastVotersOffset(): number {
    return this.votersChanges[this.votersChanges.length - 1]?.offset ?? -1;
  }

  reset(start: number, startChain: number, baseVoters: readonly NodeId[]): void {
    this.start = start;
    this.startChain = startChain;
    this.baseVoters = baseVoters;
    this.entries = [];
    this.chains = [];
    this.votersChanges = [];
  }

  truncate(to: number): void {
    if (to < this.start) throw new InvariantViolation('driverContract', `truncation to ${to} below the log start ${this.start}`);
    this.entries.length = Math.min(this.entries.length, to - this.start);
    this.chains.length = this.entries.length;
    while (this.lastVotersOffset >= to) this.votersChanges.pop();
  }

  append(e: Entry): number {
    if (e.offset !== this.end) throw new InvariantViolation('driverContract', `entry at offset ${e.offset} appended to a log ending at ${this.end}`);
    const chain = chainOf(this.chainAt(this.end - 1) ?? 0, e);
    this.entries.push(e);
    this.chains.push(chain);
    if (e.kind === 'voters') this.votersChanges.push({ offset: e.offset, voters: decodeVoters(e.data) });
    return chain;
  }
}

/** Whether a voter durably holds the log up to `end` as the leader that asks does. */
export type DurablyHolds = (voter: NodeId, end: number) => boolean;

export class Checker {
  private readonly leaderOf = new Map<number, NodeId>();
  /** votes[epoch]: the candidate each node persisted a vote for in that epoch. */
  private readonly votes = new Map<number, Map<NodeId, NodeId>>();
  /** The voter set in force at the end of the committed log. */
  private committedVotersValue: readonly NodeId[];
  /** Chain value of every (offset, epoch) any log ever held. */
  private readonly chainAt = new Map<number, number>();
  /** committedChains[o]: the chain of the committed log at offset o. */
  private readonly committedChains: number[] = [];
  /** The highest commit end a leader of each epoch reached. */
  private readonly commitEndByEpoch = new Map<number, number>();
  private readonly ledEpochs = new Set<string>();

  constructor(bootstrapVoters: readonly NodeId[]) {
    this.committedVotersValue = bootstrapVoters;
  }

  get committedVoters(): readonly NodeId[] {
    return this.committedVotersValue;
  }

  get committedEnd(): number {
    return this.committedChains.length;
  }

  committedChainAt(offset: number): number | undefined {
    return this.committedChains[offset];
  }

  /**
   * `node` appends `e` to `log`. Log matching: the same (offset, epoch) anywhere means the same log
   * up to it. A `voters` entry seen for the first time is its leader's append (KIP-853): the
   * voter set it replaces must be committed already, and the two sets differ by one voter.
   */
  appended(node: NodeId, e: Entry, log: MirrorLog): void {
    const previousOffset = log.lastVotersOffset;
    const previous = log.voters;
    const chain = log.append(e);
    const key = e.offset * 1_000_000 + e.epoch;
    const seen = this.chainAt.get(key);
    if (seen === undefined) {
      this.chainAt.set(key, chain);
      if (e.kind === 'voters') this.votersChanged(node, e, previousOffset, previous, log.voters);
    } else if (seen !== chain) {
      throw new InvariantViolation('logMatching', `node ${node} holds offset ${e.offset} epoch ${e.epoch} with a log prefix that differs from another node's`);
    }
  }

  private votersChanged(node: NodeId, e: Entry, previousOffset: number, previous: readonly NodeId[], next: readonly NodeId[]): void {
    if (previousOffset >= this.committedEnd) {
      throw new InvariantViolation('membershipChange', `node ${node} appends voters [${next.join(',')}] at ${e.offset} while the change at ${previousOffset} is uncommitted (commit end ${this.committedEnd})`);
    }
    const changed = previous.filter((id) => !next.includes(id)).length + next.filter((id) => !previous.includes(id)).length;
    if (changed !== 1) {
      throw new InvariantViolation('membershipChange', `node ${node} changes voters [${previous.join(',')}] to [${next.join(',')}] at ${e.offset}: not one voter at a time`);
    }
  }

  /** The chain any log had at (offset, epoch), for a snapshot installed without its entries. */
  knownChain(offset: number, epoch: number): number | undefined {
    return this.chainAt.get(offset * 1_000_000 + epoch);
  }

  hardStatePersisted(node: NodeId, prev: HardState, next: HardState): void {
    if (next.epoch < prev.epoch) throw new InvariantViolation('monotonicEpoch', `node ${node} persisted epoch ${next.epoch} after ${prev.epoch}`);
    if (next.epoch === prev.epoch && prev.votedFor !== -1 && next.votedFor !== prev.votedFor) {
      throw new InvariantViolation('singleVote', `node ${node} changed its vote in epoch ${next.epoch} from ${prev.votedFor} to ${next.votedFor}`);
    }
    if (next.leaderId !== -1) this.leaderIs(next.epoch, next.leaderId, `node ${node}'s persisted state`);
    if (next.votedFor === -1) return;
    // Across wipes too: a voter that lost its disk and votes again in an epoch breaks the same rule.
    let inEpoch = this.votes.get(next.epoch);
    if (inEpoch === undefined) this.votes.set(next.epoch, (inEpoch = new Map()));
    const earlier = inEpoch.get(node);
    if (earlier !== undefined && earlier !== next.votedFor) {
      throw new InvariantViolation('singleVote', `node ${node} voted for ${earlier} and then ${next.votedFor} in epoch ${next.epoch}`);
    }
    inEpoch.set(node, next.votedFor);
  }

  /** Every message leaves only after the election state it depends on was persisted. */
  sent(node: NodeId, m: Message, persisted: HardState): void {
    if (m.from !== node) throw new InvariantViolation('driverContract', `node ${node} sent a message from ${m.from}`);
    const preVote = m.type === 'vote' && m.preVote;
    if (preVote ? m.epoch > persisted.epoch + 1 : m.epoch > persisted.epoch) {
      throw new InvariantViolation('persistBeforeSend', `node ${node} sent ${m.type} in epoch ${m.epoch} with epoch ${persisted.epoch} persisted`);
    }
    if (m.type === 'vote' && !m.preVote && persisted.votedFor !== node) {
      throw new InvariantViolation('persistBeforeSend', `node ${node} asked for votes in epoch ${m.epoch} before persisting its own vote`);
    }
    if (m.type === 'voteResponse' && !m.preVote && m.granted && (persisted.epoch !== m.epoch || persisted.votedFor !== m.to)) {
      throw new InvariantViolation('persistBeforeSend', `node ${node} granted its vote to ${m.to} in epoch ${m.epoch} before persisting it`);
    }
  }

  /**
   * A node reported itself leader of `epoch` with high watermark `hw` over `log`: one leader per
   * epoch, elected by a majority of the voters its log holds; a new leader holds everything earlier
   * epochs committed; a commit is durable on a majority of the voters in force; the commit only extends.
   */
  leaderObserved(node: NodeId, epoch: number, hw: number, log: MirrorLog, durablyHolds: DurablyHolds): void {
    this.leaderIs(epoch, node, `node ${node} as leader`);
    const key = `${epoch}:${node}`;
    if (!this.ledEpochs.has(key)) {
      this.ledEpochs.add(key);
      const votes = this.votes.get(epoch);
      const voters = log.voters;
      const granted = voters.filter((v) => votes?.get(v) === node).length;
      if (granted <= voters.length / 2) {
        throw new InvariantViolation('electionQuorum', `node ${node} leads epoch ${epoch} with the votes of ${granted} of its voters [${voters.join(',')}]`);
      }
      let need = 0;
      for (const [e, end] of this.commitEndByEpoch) if (e < epoch && end > need) need = end;
      if (!this.holdsCommitted(log, need)) {
        throw new InvariantViolation('leaderCompleteness', `node ${node} leads epoch ${epoch} without the entries committed below offset ${need}`);
      }
    }
    if (hw > log.end) throw new InvariantViolation('stateMachineSafety', `leader ${node} has high watermark ${hw} past its log end ${log.end}`);
    if (!this.holdsCommitted(log, Math.min(hw, this.committedEnd))) {
      throw new InvariantViolation('stateMachineSafety', `leader ${node} of epoch ${epoch} commits a log that differs from the committed one`);
    }
    if (hw <= (this.commitEndByEpoch.get(epoch) ?? 0)) return;
    this.commitEndByEpoch.set(epoch, hw);
    // A new leader carries the high watermark it learned as a follower: only a commit past what any
    // leader committed is its own decision. Effective on append: the set at its log end decides.
    if (hw <= this.committedEnd) return;
    const voters = log.voters;
    const holding = voters.filter((v) => durablyHolds(v, hw)).length;
    if (holding <= voters.length / 2) {
      throw new InvariantViolation('commitQuorum', `leader ${node} of epoch ${epoch} commits to ${hw}, durable on ${holding} of its voters [${voters.join(',')}]`);
    }
    for (let o = this.committedEnd; o < hw; o++) {
      const chain = log.chainAt(o);
      if (chain === undefined) throw new InvariantViolation('stateMachineSafety', `leader ${node} committed offset ${o} it no longer holds`);
      this.committedChains.push(chain);
      const e = log.entryAt(o);
      if (e?.kind === 'voters') this.committedVotersValue = decodeVoters(e.data);
    }
  }

  /** Applying entry `e` at `node`: in order, committed, and durable there first. */
  applied(node: NodeId, e: Entry, expectedOffset: number, log: MirrorLog, durable: Entry | undefined, hw: number): void {
    if (e.offset !== expectedOffset) {
      throw new InvariantViolation('stateMachineSafety', `node ${node} applied offset ${e.offset} when ${expectedOffset} was next`);
    }
    if (durable === undefined || durable.epoch !== e.epoch || durable.data !== e.data) {
      throw new InvariantViolation('applyDurable', `node ${node} applied offset ${e.offset} epoch ${e.epoch} before it was durable there`);
    }
    if (e.offset >= hw) throw new InvariantViolation('stateMachineSafety', `node ${node} applied offset ${e.offset} at or past its high watermark ${hw}`);
    const committed = this.committedChains[e.offset];
    if (committed === undefined) throw new InvariantViolation('stateMachineSafety', `node ${node} applied offset ${e.offset}, which no leader committed`);
    if (log.chainAt(e.offset) !== committed) {
      throw new InvariantViolation('stateMachineSafety', `node ${node} applied offset ${e.offset} epoch ${e.epoch}, which differs from the committed entry`);
    }
  }

  private leaderIs(epoch: number, node: NodeId, who: string): void {
    const known = this.leaderOf.get(epoch);
    if (known === undefined) this.leaderOf.set(epoch, node);
    else if (known !== node) throw new InvariantViolation('electionSafety', `${who} says ${node} leads epoch ${epoch}, but ${known} does`);
  }

  /** Whether `log` agrees with the committed log on every offset below `end` it still holds. */
  private holdsCommitted(log: MirrorLog, end: number): boolean {
    if (end === 0) return true;
    if (log.end < end) return false;
    const at = Math.max(end - 1, log.start - 1);
    return log.chainAt(at) === this.committedChains[at];
  }
}
