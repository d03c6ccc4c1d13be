// The invariants the Raft simulation asserts after every event: election safety, one vote per
// epoch, log matching, leader completeness, state-machine safety (including "applied only once
// durable"), monotonic commit and persisted epoch, and the driver contract (nothing sent before
// the HardState it depends on). Logs are compared by a hash chain: an entry's chain value covers
// it and every entry before it, so two logs match up to an offset iff their chains agree there.
// Tests only, one thread.
import type { Entry, HardState, Message, NodeId } from '../../../src/coordinator/raft/types.js';

export type Invariant =
  | 'electionSafety' | 'singleVote' | 'logMatching' | 'leaderCompleteness' | 'stateMachineSafety'
  | 'applyDurable' | 'monotonicCommit' | 'monotonicEpoch' | 'persistBeforeSend' | 'driverContract' | 'liveness' | 'noThrow';

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

  reset(start: number, startChain: number): void {
    this.start = start;
    this.startChain = startChain;
    this.entries = [];
    this.chains = [];
  }

  truncate(to: number): void {
    if (to < this.start) throw new InvariantViolation('driverContract', `truncation to ${to} below the log start ${this.start}`);
    this.entries.length = Math.min(this.entries.length, to - this.start);
    this.chains.length = this.entries.length;
  }

  append(e: Entry): number {
    if (e.offset !== this.end) throw new InvariantViolation('driverContract', `entry at offset ${e.offset} appended to a log ending at ${this.end}`);
    const chain = chainOf(this.chainAt(this.end - 1) ?? 0, e);
    this.entries.push(e);
    this.chains.push(chain);
    return chain;
  }
}

export class Checker {
  private readonly leaderOf = new Map<number, NodeId>();
  /** Chain value of every (offset, epoch) any log ever held. */
  private readonly chainAt = new Map<number, number>();
  /** committedChains[o]: the chain of the committed log at offset o. */
  private readonly committedChains: number[] = [];
  /** The highest commit end a leader of each epoch reached. */
  private readonly commitEndByEpoch = new Map<number, number>();
  private readonly ledEpochs = new Set<string>();

  get committedEnd(): number {
    return this.committedChains.length;
  }

  committedChainAt(offset: number): number | undefined {
    return this.committedChains[offset];
  }

  /** Log matching: the same (offset, epoch) anywhere means the same log up to it. */
  appended(node: NodeId, e: Entry, chain: number): void {
    const key = e.offset * 1_000_000 + e.epoch;
    const seen = this.chainAt.get(key);
    if (seen === undefined) this.chainAt.set(key, chain);
    else if (seen !== chain) {
      throw new InvariantViolation('logMatching', `node ${node} holds offset ${e.offset} epoch ${e.epoch} with a log prefix that differs from another node's`);
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
   * epoch; a new leader holds everything earlier epochs committed; the commit only extends.
   */
  leaderObserved(node: NodeId, epoch: number, hw: number, log: MirrorLog): void {
    this.leaderIs(epoch, node, `node ${node} as leader`);
    const key = `${epoch}:${node}`;
    if (!this.ledEpochs.has(key)) {
      this.ledEpochs.add(key);
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
    for (let o = this.committedEnd; o < hw; o++) {
      const chain = log.chainAt(o);
      if (chain === undefined) throw new InvariantViolation('stateMachineSafety', `leader ${node} committed offset ${o} it no longer holds`);
      this.committedChains.push(chain);
    }
    if (hw > (this.commitEndByEpoch.get(epoch) ?? 0)) this.commitEndByEpoch.set(epoch, hw);
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
