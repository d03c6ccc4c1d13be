// One seed of the Raft simulation, in two phases. Safety: the client proposes and adds or removes
// voters while nodes crash (losing or tearing their unsynced writes) and the network partitions,
// drops, duplicates and reorders; every event is checked. Liveness: faults stop, links heal, crashed nodes come back
// (a minority of voters may stay down), or a flapping link keeps cutting the leader off one
// follower; a stable leader must appear within a bound, elections must stop once it settled, and
// every proposal made in this phase must end decided (committed, or overwritten and so refused)
// with the commit never stalling meanwhile. A failure carries the command that replays it. Tests only.
import type { Mutation } from '../../../src/coordinator/raft/raft_node.js';
import { InvariantViolation } from './checker.js';
import { drawFaults, formatFaults, type FaultPlan } from './faults.js';
import { SimRandom } from './random.js';
import { Simulation } from './simulation.js';

/** The core's deliberately broken variants, each of which the simulation must catch. */
export const MUTATIONS: readonly Mutation[] = ['voteTwice', 'countOldTermReplicas', 'applyBeforeDurable', 'skipPreVote', 'ignoreUnreachable'];

/** Ticks after healing within which a leader every connected voter follows must exist. */
export const LEADER_BOUND_TICKS = 200;
/**
 * Ticks a first stable leader gets to settle: a follower whose fetch was lost just before the heal
 * may still time out and, with another voter the flapping link cuts off, legitimately elect anew.
 */
export const SETTLE_TICKS = 40;
/** Ticks the client keeps proposing to a settled leader. */
export const LIVE_TICKS = 80;
/** Epoch changes tolerated after the leader settled while a majority stays connected. */
export const MAX_REELECTIONS = 1;
/** While proposals are undecided, the commit or some voter's durable log must grow at least this often. */
export const STALL_TICKS = 60;

export interface SeedOptions {
  readonly mutation?: Mutation | undefined;
  /** Force the leader-hunting flapping link into the liveness phase (else the seed decides). */
  readonly hunt?: boolean;
  readonly traceLines?: number;
}

export interface SeedOutcome {
  readonly seed: number;
  readonly plan: FaultPlan;
  readonly hunt: boolean;
  readonly violation: InvariantViolation | null;
  readonly trace: readonly string[];
}

export function runSeed(seed: number, options: SeedOptions = {}): SeedOutcome {
  const plan = drawFaults(seed);
  const choices = SimRandom.derived(seed, 3);
  const drawnHunt = choices.chance(0.3);
  const hunt = options.hunt ?? drawnHunt;
  const sim = new Simulation({ seed, plan, mutation: options.mutation, traceLines: options.traceLines ?? 0 });
  let violation: InvariantViolation | null = null;
  try {
    sim.start();
    sim.startChaos();
    sim.startProposing();
    sim.runFor(plan.safetyTicks);
    livenessPhase(sim, hunt, choices);
  } catch (e) {
    if (e instanceof InvariantViolation) violation = e;
    else violation = new InvariantViolation('noThrow', `the core threw ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  }
  return { seed, plan, hunt, violation, trace: sim.traceTail() };
}

function livenessPhase(sim: Simulation, hunt: boolean, choices: SimRandom): void {
  sim.stopChaos();
  // Nodes kept down stay a minority of every voter set that may decide (an uncommitted change's too).
  const sets = sim.voterSetsInForce();
  const inAll = sim.voterIds.filter((id) => sets.every((set) => set.includes(id)));
  const tolerated = Math.min(...sets.map((set) => Math.floor((set.length - 1) / 2)));
  const keepDown = hunt || !choices.chance(0.3) ? [] : choices.sample(inAll, Math.min(tolerated, inAll.length));
  for (const n of sim.nodes) if (!keepDown.includes(n.id)) sim.restart(n.id);
  for (const id of keepDown) sim.crash(id);
  if (hunt) sim.startLeaderHuntingFlap();
  if (!sim.runUntil(() => sim.stableLeader() !== null, LEADER_BOUND_TICKS, 0.25)) {
    throw new InvariantViolation('liveness', `no leader followed by every connected voter within ${LEADER_BOUND_TICKS} ticks of healing (${keepDown.length} voters kept down)`);
  }
  sim.runFor(SETTLE_TICKS);
  if (!sim.runUntil(() => sim.stableLeader() !== null, LEADER_BOUND_TICKS, 0.25)) {
    throw new InvariantViolation('liveness', `the leader did not settle: no stable leader ${SETTLE_TICKS + LEADER_BOUND_TICKS} ticks after the first one`);
  }
  const epoch = sim.maxEpoch();
  const committedBefore = sim.checker.committedEnd;
  sim.runFor(LIVE_TICKS);
  sim.stopProposing();
  const elections = sim.maxEpoch() - epoch;
  if (elections > MAX_REELECTIONS) {
    throw new InvariantViolation('liveness', `livelock: ${elections} epoch changes in ${LIVE_TICKS} ticks after the leader settled, with a majority connected`);
  }
  // Every proposal of this phase must end decided, replication moving all the while (a lagging
  // voter the flapping link left behind may need a while to catch up before the commit moves).
  while (sim.undecidedLivenessProposals() > 0) {
    const mark = sim.replicationMark();
    const committed = sim.checker.committedEnd;
    // A commit counts on its own: one that commits a voter's removal drops its log from the mark.
    if (!sim.runUntil(() => sim.checker.committedEnd > committed || sim.replicationMark() > mark, STALL_TICKS)) {
      throw new InvariantViolation('liveness', `no replication progress for ${STALL_TICKS} ticks with ${sim.undecidedLivenessProposals()} proposals undecided (commit end ${sim.checker.committedEnd})`);
    }
  }
  if (sim.checker.committedEnd <= committedBefore) {
    throw new InvariantViolation('liveness', `no commit progress in ${LIVE_TICKS} ticks with a settled leader (commit end ${committedBefore})`);
  }
}

export function replayCommand(seed: number, options: SeedOptions = {}): string {
  const parts = ['node dist/test/sim/raft/replay.js', `--seed ${seed}`];
  if (options.mutation !== undefined) parts.push(`--mutation ${options.mutation}`);
  if (options.hunt === true) parts.push('--hunt');
  parts.push('--trace');
  return parts.join(' ');
}

/** A failure report: the violation, the seed's fault parameters, the replay command and the trace. */
export function formatFailure(outcome: SeedOutcome, options: SeedOptions = {}): string {
  const v = outcome.violation;
  return [
    `raft simulation failed, seed ${outcome.seed}${options.mutation === undefined ? '' : ` (mutation ${options.mutation})`}: ${v?.message ?? 'no violation'}`,
    `faults: ${formatFaults(outcome.plan)} huntInLiveness=${outcome.hunt}`,
    `replay: ${replayCommand(outcome.seed, options)}`,
    ...(outcome.trace.length > 0 ? ['last events:', ...outcome.trace.map((l) => `  ${l}`)] : []),
  ].join('\n');
}

/** Run seeds [from, from + count) and return the first failure, replayed with a trace, or null. */
export function firstFailure(from: number, count: number, options: SeedOptions = {}): string | null {
  for (let seed = from; seed < from + count; seed++) {
    const outcome = runSeed(seed, options);
    if (outcome.violation !== null) return formatFailure(runSeed(seed, { ...options, traceLines: 60 }), options);
  }
  return null;
}
