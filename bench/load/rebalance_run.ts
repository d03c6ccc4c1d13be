// One rebalance measurement (bench process, main thread): a stamped producer writes a steady
// rate over P partitions; `members` group members consume until each partition has exactly one
// owner and the load is balanced over all of them for a settle window; then, after a baseline
// window and a random extra delay, one more member joins (joinAt = the moment its client is
// started) and the run waits until the group is settled again over a settle window.
// rebalance_analysis.ts turns the deliveries into figures.
// Why the random delay: members learn of a rebalance at their next heartbeat, so when the join
// falls in their heartbeat cycle decides much of the figures; a fixed delay after the group
// settled (itself right after a heartbeat) would always pick the same point of the cycle.
// While it runs, every member's claimed assignment is polled every ASSIGN_POLL_MS, so the time
// until the client had a moved partition (the protocol's share) is separated from the time until
// it delivered from it (the client's fetch start).
// Bounds: every wait has a deadline (phaseTimeoutMs); the delivery log is fixed-size; members and
// the producer are closed on every path.
import { performance } from 'node:perf_hooks';
import { startMember } from './group_members.js';
import type { GroupClient, GroupMember } from './group_members.js';
import { DeliveryLog, analyzeRebalance, isSettled, maxOf, ownersIn } from './rebalance_analysis.js';
import type { RebalanceFigures } from './rebalance_analysis.js';
import { StampedProducer } from './stamped_producer.js';

export interface RebalanceRunOptions {
  readonly client: GroupClient;
  readonly host: string;
  readonly port: number;
  readonly topic: string;
  readonly groupId: string;
  readonly partitions: number;
  /** Members before the join (one more joins). */
  readonly members: number;
  readonly ratePerSec: number;
  readonly recordBytes: number;
  readonly produceVersion: number;
  readonly requestTimeoutMs: number;
  readonly baselineMs: number;
  readonly settleMs: number;
  /** The join comes baselineMs + uniform[0, joinJitterMs) after the group settled. */
  readonly joinJitterMs: number;
  /** Bound on forming the group, and again on settling after the join. */
  readonly phaseTimeoutMs: number;
}

export interface RebalanceRunResult extends RebalanceFigures {
  /** Start of the members -> group settled over the settle window. */
  readonly formMs: number;
  /** Join -> settled (the end of the settle window). */
  readonly settledMs: number;
  /** Join -> the new owner's client claimed the moved partition: the slowest. */
  readonly assignedMs: number;
  /** Claimed -> first delivery of a moved partition: the slowest. */
  readonly fetchStartMs: number;
  readonly delivered: number;
  readonly droppedLog: number;
  readonly producerLateTicks: number;
}

const ASSIGN_POLL_MS = 5;
const WAIT_POLL_MS = 50;
/** Log capacity: the producer's rate over this many seconds (re-deliveries included). */
const LOG_SECONDS = 300;

/**
 * Polls members' claimed assignments from the join on: the first time member m claimed partition
 * p, and the first time m's claim differed from what it claimed at the join.
 */
class AssignmentWatch {
  readonly firstClaim: Float64Array;
  readonly changedAt: Float64Array;
  private readonly atJoin: string[];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly members: readonly (GroupMember | undefined)[], private readonly partitions: number) {
    this.firstClaim = new Float64Array(members.length * partitions).fill(NaN);
    this.changedAt = new Float64Array(members.length).fill(NaN);
    this.atJoin = members.map((m) => claimKey(m));
    this.timer = setInterval(() => this.poll(), ASSIGN_POLL_MS);
  }

  claimedAt(member: number, partition: number): number {
    return this.firstClaim[member * this.partitions + partition] as number;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private poll(): void {
    const now = performance.now();
    this.members.forEach((m, i) => {
      if (Number.isNaN(this.changedAt[i]) && claimKey(m) !== this.atJoin[i]) this.changedAt[i] = now;
      for (const p of m?.assigned() ?? []) {
        const k = i * this.partitions + p;
        if (p < this.partitions && Number.isNaN(this.firstClaim[k])) this.firstClaim[k] = now;
      }
    });
  }
}

function claimKey(m: GroupMember | undefined): string {
  return [...(m?.assigned() ?? [])].sort((a, b) => a - b).join(',');
}

/** What a run is waiting on: its log, the members so far, and the producer's failure if any. */
interface RunState {
  readonly o: RebalanceRunOptions;
  readonly log: DeliveryLog;
  readonly members: readonly (GroupMember | undefined)[];
  producerError: Error | null;
}

/** Waits until the group is settled with `members` owners over the last `windowMs`; the time it was. */
async function waitSettled(st: RunState, members: number, since: number, windowMs: number, what: string): Promise<number> {
  const { o, log } = st;
  const deadline = since + o.phaseTimeoutMs;
  for (;;) {
    if (st.producerError !== null) throw new Error(`${what}: producer failed: ${st.producerError.message}`);
    const now = performance.now();
    if (now - since >= windowMs && isSettled(ownersIn(log, o.partitions, now - windowMs, now), members)) return now;
    if (now > deadline) {
      const owners = ownersIn(log, o.partitions, now - windowMs, now);
      const errors = st.members.map((m, i) => (m?.lastError() ? `member ${i}: ${m.lastError()}` : '')).filter((e) => e !== '');
      throw new Error(`${what}: group not settled after ${o.phaseTimeoutMs} ms (owners over the last ${windowMs} ms: ${[...owners].join(',')})` +
        (errors.length > 0 ? `; ${errors.join('; ')}` : ''));
    }
    await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
  }
}

export async function runRebalance(o: RebalanceRunOptions): Promise<RebalanceRunResult> {
  const log = new DeliveryLog(Math.ceil(o.ratePerSec * LOG_SECONDS));
  const producer = await StampedProducer.open({
    host: o.host, port: o.port, topic: o.topic, partitions: o.partitions, ratePerSec: o.ratePerSec, recordBytes: o.recordBytes,
    version: o.produceVersion, requestTimeoutMs: o.requestTimeoutMs, maxMessages: Math.ceil(o.ratePerSec * LOG_SECONDS / 2),
    maxDurationMs: 2 * o.phaseTimeoutMs + o.baselineMs + o.joinJitterMs + o.settleMs + 30_000,
  });
  const members: (GroupMember | undefined)[] = new Array<GroupMember | undefined>(o.members + 1);
  const start = (i: number): Promise<void> => startMember(o.client, {
    bootstrap: `${o.host}:${o.port}`, groupId: o.groupId, topic: o.topic, clientId: `sluice-bench-member-${i}`,
  }, (partition, stamp) => log.add(performance.now(), partition, i, stamp)).then((m) => { members[i] = m; });
  const st: RunState = { o, log, members, producerError: null };
  producer.done.catch((err: unknown) => {
    st.producerError = err instanceof Error ? err : new Error(String(err));
  });
  let watch: AssignmentWatch | null = null;
  producer.start();
  try {
    const t0 = performance.now();
    // allSettled: a member that started while another failed must still be registered (and closed).
    const failed = (await Promise.allSettled(Array.from({ length: o.members }, (_, i) => start(i)))).find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const settledAt = await waitSettled(st, o.members, t0, o.settleMs, 'forming');
    await new Promise((r) => setTimeout(r, o.baselineMs + Math.random() * o.joinJitterMs));
    const joinAt = performance.now();
    if (!isSettled(ownersIn(log, o.partitions, joinAt - o.baselineMs, joinAt), o.members)) throw new Error('the group changed during the baseline window');
    watch = new AssignmentWatch(members, o.partitions);
    await start(o.members);
    const end = await waitSettled(st, o.members + 1, joinAt, o.settleMs, 'after the join');
    const figures = analyzeRebalance(log, {
      partitions: o.partitions, baselineFrom: joinAt - o.baselineMs, joinAt, settledFrom: end - o.settleMs, end, changedAt: watch.changedAt,
    });
    const w = watch;
    const claimed = figures.movedList.map((m) => w.claimedAt(m.to, m.partition));
    return {
      ...figures, formMs: settledAt - t0, settledMs: end - joinAt,
      assignedMs: maxOf(claimed.map((c) => c - joinAt)),
      fetchStartMs: maxOf(figures.movedList.map((m, i) => m.firstAt - (claimed[i] as number))),
      delivered: log.length, droppedLog: log.dropped, producerLateTicks: producer.lateTicks,
    };
  } finally {
    watch?.stop();
    await Promise.all(members.map((m) => m?.close()));
    await producer.stop().catch(() => undefined);
  }
}
