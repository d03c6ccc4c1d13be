// The expansion simulation (issue 15 item 6): modelled brokers (NIC, disk and CPU bandwidth) under
// the produce load the PartitionSpecs' byte rates put on them, the controller's KIP-455 behaviour
// (kip455.ts), and copies of moving replicas running at the rates the executor's KIP-73 throttle
// configs allow, all driving the real ReassignmentExecutor in simulated time. Tests and bench only.
//
// Load model, bytes/s per broker: a partition producing r bytes/s with n replicas costs its leader
// r in and (n − 1 + consumers)·r out on the NIC, r of disk writes and (n + consumers)·r of CPU; each
// follower r in, r of disk and r of CPU. A copy stream at c bytes/s costs the leader c out, c of disk
// reads and c of CPU, and the new replica c in, c of disk and c of CPU. NIC utilisation is
// max(in, out) / capacity (full duplex); disk and CPU are their sums over capacity.
// Latency model: a broker at utilisation u (the highest of its resources that the path uses: CPU,
// NIC and disk for produce, CPU and NIC for fetch from the page cache) answers in
//     p99(u) = base · (1 + u⁴ / (1 − u)),  u capped at 0.99
// flat while a broker is lightly loaded, 1.13x at 50%, 1.32x at 60%, 1.8x at 70%, steep beyond.
// The cluster p99 is the 99th percentile over brokers weighted by the bytes/s each leads, and the
// consumer lag is Σ over brokers of led bytes/s × fetch p99 (Little's law: bytes produced while one
// fetch is answered).
// A copy stream runs at min(sender's throttle rate / its streams, receiver's rate / its streams,
// the sender's and receiver's NIC room / their streams); the new replica must also take the
// partition's produce, so a stream gains (rate − r) bytes/s on a log that started at sizeBytes.
import type { ExecutorEffect, ExecutorOptions, MetricsSample } from '../../../src/cluster/expansion/executor.js';
import { FOLLOWER_RATE, LEADER_RATE, ReassignmentExecutor } from '../../../src/cluster/expansion/executor.js';
import type { LeadershipChange, PartitionMove, PlanInput } from '../../../src/cluster/expansion/model.js';
import { DEFAULT_THROTTLE } from '../../../src/cluster/expansion/throttle.js';
import { Kip455Controller, partitionKey } from './kip455.js';

export interface ExpansionPlan {
  readonly moves: readonly PartitionMove[];
  readonly leadershipChanges: readonly LeadershipChange[];
}

export interface BrokerHardware {
  readonly nicBytesPerSec: number;
  readonly diskBytesPerSec: number;
  readonly cpuBytesPerSec: number;
}

/** Extra utilisation on one broker for a while (a CPU hog, a slow disk): the injected breach. */
export interface LoadFault {
  readonly broker: number;
  readonly fromMs: number;
  readonly toMs: number;
  readonly utilisation: number;
}

export interface SimOptions {
  readonly executor: ExecutorOptions;
  readonly hardware: BrokerHardware;
  /** Consumers reading each partition once. */
  readonly consumers: number;
  readonly baseP99Ms: number;
  readonly stepMs: number;
  readonly sampleMs: number;
  /** The simulation stops here if the plan is not done. */
  readonly maxSimMs: number;
  readonly faults: readonly LoadFault[];
}

/**
 * Brokers with a 10 Gbit/s NIC, 2 GB/s of disk and 4 GB/s of request handling; an executor that
 * copies up to 64 GiB and 8 moves per broker per batch, watches 10 s after each, pauses at 1.5x
 * the baseline p99 (2x lag) and resumes after 30 s healthy; a throttle holding brokers under 60%
 * (where the latency model gives 1.32x, under the breach ratio).
 */
export const SIM_DEFAULTS: SimOptions = {
  executor: {
    batchBytes: 64 * 1024 ** 3,
    perBrokerMoves: 8,
    hotBytesPerSec: 5e6,
    includeHot: true,
    observationMs: 10_000,
    breach: { produceP99: 1.5, fetchP99: 1.5, consumerLag: 2 },
    healthyHoldMs: 30_000,
    throttle: { ...DEFAULT_THROTTLE, targets: { cpu: 0.6, nic: 0.6, disk: 0.6 } },
    lookahead: 1000,
  },
  hardware: { nicBytesPerSec: 1.25e9, diskBytesPerSec: 2e9, cpuBytesPerSec: 4e9 },
  consumers: 1,
  baseP99Ms: 5,
  stepMs: 1000,
  sampleMs: 5000,
  maxSimMs: 30 * 24 * 3600 * 1000,
  faults: [],
};

export interface SimResult {
  readonly state: string;
  readonly moves: number;
  /** Replicas added over all moves: what the lower bound k·⌊R/(n+k)⌋ counts. */
  readonly replicaMoves: number;
  readonly leadershipChanges: number;
  readonly bytesMoved: number;
  readonly batches: number;
  readonly pauses: number;
  readonly simulatedSeconds: number;
  readonly baselineP99Ms: number;
  readonly maxP99Ms: number;
  /** Time-weighted mean of the produce p99 samples while moving. */
  readonly meanP99Ms: number;
  readonly maxP99Ratio: number;
  /** Simulated ms from the first breaching sample to the pause, worst case. */
  readonly worstPauseDelayMs: number;
  readonly wallMs: number;
}

/** p99 of a broker at utilisation u (see the file's head). */
export function p99At(baseMs: number, u: number): number {
  const x = Math.min(Math.max(u, 0), 0.99);
  return baseMs * (1 + x ** 4 / (1 - x));
}

interface Load {
  nicIn: number;
  nicOut: number;
  disk: number;
  cpu: number;
  led: number;
}

interface Stream {
  readonly key: string;
  readonly from: number;
  readonly to: number;
  remaining: number;
  readonly bytesInPerSec: number;
}

export class ExpansionSim {
  private readonly loads = new Map<number, Load>();
  private readonly replicas = new Map<string, number[]>();
  private readonly leaders = new Map<string, number>();
  private readonly rates = new Map<string, { bytesIn: number; size: number }>();
  private readonly controller: Kip455Controller;
  /** The plan's partitions as they were: what rollback would restore. */
  private readonly snapshot: { topic: string; partition: number; replicas: readonly number[] }[];
  private readonly executor: ReassignmentExecutor;
  private streams: Stream[] = [];
  private readonly configs = new Map<string, number>();
  private now = 0;
  private bytesMoved = 0;
  private batches = 0;
  private pauses = 0;
  private breachSince: number | null = null;
  private worstPauseDelayMs = 0;

  constructor(
    private readonly input: PlanInput,
    private readonly plan: ExpansionPlan,
    private readonly o: SimOptions,
  ) {
    for (const b of input.brokers) this.loads.set(b.id, { nicIn: 0, nicOut: 0, disk: 0, cpu: 0, led: 0 });
    const touched = new Set([...plan.moves, ...plan.leadershipChanges].map((m) => partitionKey(m.topic, m.partition)));
    const snapshot = [];
    for (const p of input.partitions) {
      const key = partitionKey(p.topic, p.partition);
      const leader = p.leader >= 0 ? p.leader : p.replicas[0]!;
      this.addLoad(p.replicas, leader, p.bytesInPerSec, 1);
      if (!touched.has(key)) continue;
      this.replicas.set(key, [...p.replicas]);
      this.leaders.set(key, leader);
      this.rates.set(key, { bytesIn: p.bytesInPerSec, size: p.sizeBytes });
      snapshot.push({ topic: p.topic, partition: p.partition, replicas: p.replicas });
    }
    this.controller = new Kip455Controller(snapshot, this.leaders);
    this.executor = new ReassignmentExecutor(plan.moves, plan.leadershipChanges, o.executor, new Map(input.brokers.map((b) => [b.id, b.rack])));
    this.snapshot = snapshot;
  }

  /** Adds (sign 1) or removes (sign −1) a partition's steady load. */
  private addLoad(replicas: readonly number[], leader: number, r: number, sign: number): void {
    for (const b of replicas) {
      const l = this.loads.get(b)!;
      if (b === leader) {
        l.nicIn += sign * r;
        l.nicOut += sign * r * (replicas.length - 1 + this.o.consumers);
        l.cpu += sign * r * (replicas.length + this.o.consumers);
        l.led += sign * r;
      } else {
        l.nicIn += sign * r;
        l.cpu += sign * r;
      }
      l.disk += sign * r;
    }
  }

  private utilisation(id: number, copyIn: number, copyOut: number): { cpu: number; nic: number; disk: number } {
    const l = this.loads.get(id)!;
    const h = this.o.hardware;
    const hog = this.o.faults.reduce((sum, f) => (f.broker === id && this.now >= f.fromMs && this.now < f.toMs ? sum + f.utilisation : sum), 0);
    return {
      cpu: (l.cpu + copyIn + copyOut) / h.cpuBytesPerSec + hog,
      nic: Math.max(l.nicIn + copyIn, l.nicOut + copyOut) / h.nicBytesPerSec,
      disk: (l.disk + copyIn + copyOut) / h.diskBytesPerSec + hog,
    };
  }

  /** Stream rates this step and each broker's copy traffic in and out. */
  private streamRates(): { rates: number[]; copyIn: Map<number, number>; copyOut: Map<number, number> } {
    const outs = new Map<number, number>();
    const ins = new Map<number, number>();
    for (const s of this.streams) {
      outs.set(s.from, (outs.get(s.from) ?? 0) + 1);
      ins.set(s.to, (ins.get(s.to) ?? 0) + 1);
    }
    const nic = this.o.hardware.nicBytesPerSec;
    const rates = this.streams.map((s) => {
      const sender = this.loads.get(s.from)!;
      const receiver = this.loads.get(s.to)!;
      const nOut = outs.get(s.from)!;
      const nIn = ins.get(s.to)!;
      return Math.max(
        0,
        Math.min(
          (this.configs.get(`${s.from}|${LEADER_RATE}`) ?? Infinity) / nOut,
          (this.configs.get(`${s.to}|${FOLLOWER_RATE}`) ?? Infinity) / nIn,
          (nic - sender.nicOut) / nOut,
          (nic - receiver.nicIn) / nIn,
        ),
      );
    });
    const copyIn = new Map<number, number>();
    const copyOut = new Map<number, number>();
    this.streams.forEach((s, i) => {
      copyOut.set(s.from, (copyOut.get(s.from) ?? 0) + rates[i]!);
      copyIn.set(s.to, (copyIn.get(s.to) ?? 0) + rates[i]!);
    });
    return { rates, copyIn, copyOut };
  }

  private sample(copyIn: ReadonlyMap<number, number>, copyOut: ReadonlyMap<number, number>): MetricsSample {
    const produce: [number, number][] = [];
    const fetch: [number, number][] = [];
    let lag = 0;
    const brokers = this.input.brokers.map((b) => {
      const u = this.utilisation(b.id, copyIn.get(b.id) ?? 0, copyOut.get(b.id) ?? 0);
      const led = this.loads.get(b.id)!.led;
      const fetchP99 = p99At(this.o.baseP99Ms, Math.max(u.cpu, u.nic));
      produce.push([p99At(this.o.baseP99Ms, Math.max(u.cpu, u.nic, u.disk)), led]);
      fetch.push([fetchP99, led]);
      lag += (led * fetchP99) / 1000;
      const h = this.o.hardware;
      return { id: b.id, ...u, cpuBytesPerSec: h.cpuBytesPerSec, nicBytesPerSec: h.nicBytesPerSec, diskBytesPerSec: h.diskBytesPerSec, replicationBytesPerSec: (copyIn.get(b.id) ?? 0) + (copyOut.get(b.id) ?? 0) };
    });
    return { produceP99Ms: weightedP99(produce), fetchP99Ms: weightedP99(fetch), consumerLag: lag, brokers };
  }

  private apply(effects: readonly ExecutorEffect[]): void {
    this.controller.apply(effects);
    for (const e of effects) {
      if (e.kind === 'set-configs') {
        for (const c of e.entries) {
          if (c.resource !== 'broker') continue;
          if (c.value === null) this.configs.delete(`${c.name}|${c.key}`);
          else this.configs.set(`${c.name}|${c.key}`, Number(c.value));
        }
      } else if (e.kind === 'submit') {
        this.batches++;
        for (const t of e.targets) {
          const key = partitionKey(t.topic, t.partition);
          const o = this.controller.observe(key);
          const r = this.rates.get(key)!;
          for (const to of o.addingReplicas) this.streams.push({ key, from: o.leader, to, remaining: r.size, bytesInPerSec: r.bytesIn });
        }
      } else if (e.kind === 'state' && e.to === 'paused') {
        this.pauses++;
        if (this.breachSince !== null) this.worstPauseDelayMs = Math.max(this.worstPauseDelayMs, this.now - this.breachSince);
      }
    }
    const moving = new Set(this.controller.reassigning());
    this.streams = this.streams.filter((s) => moving.has(s.key));
    this.observe();
  }

  /** Moves the steady load of every partition whose replicas or leader changed, and tells the executor. */
  private observe(): void {
    const changed = this.controller.drainChanged();
    for (const o of changed) {
      const key = partitionKey(o.topic, o.partition);
      const r = this.rates.get(key)!;
      const settled = o.addingReplicas.length === 0;
      const before = this.replicas.get(key)!;
      const now = settled ? o.replicas : before;
      if (settled && now.some((b) => !before.includes(b))) {
        this.bytesMoved += r.size * now.filter((b) => !before.includes(b)).length;
      }
      this.addLoad(before, this.leaders.get(key)!, r.bytesIn, -1);
      this.addLoad(now, o.leader, r.bytesIn, 1);
      this.replicas.set(key, [...now]);
      this.leaders.set(key, o.leader);
    }
    if (changed.length > 0) this.apply(this.executor.handle({ kind: 'partitions', now: this.now, observed: changed }));
  }

  run(): SimResult {
    const wall = Date.now();
    const quiet = this.sample(new Map(), new Map());
    this.apply(this.executor.handle({ kind: 'start', now: 0, baseline: quiet, snapshot: { assignment: this.snapshot, configs: [] } }));
    let maxP99 = quiet.produceP99Ms;
    let p99Sum = 0;
    let p99Samples = 0;
    let nextSample = this.o.sampleMs;
    while (this.executor.state !== 'done' && this.now < this.o.maxSimMs) {
      this.now += this.o.stepMs;
      const { rates, copyIn, copyOut } = this.streamRates();
      const dt = this.o.stepMs / 1000;
      let finished = false;
      this.streams.forEach((s, i) => {
        s.remaining -= (rates[i]! - s.bytesInPerSec) * dt;
        finished ||= s.remaining <= 0;
      });
      if (finished) {
        const done = new Set(this.streams.filter((s) => s.remaining <= 0).map((s) => `${s.key}>${s.to}`));
        const pending = new Set(this.streams.filter((s) => s.remaining > 0).map((s) => s.key));
        for (const key of new Set(this.streams.map((s) => s.key))) if (!pending.has(key)) this.controller.complete(key);
        this.streams = this.streams.filter((s) => !done.has(`${s.key}>${s.to}`));
        this.observe();
      }
      if (this.now >= nextSample) {
        nextSample += this.o.sampleMs;
        const s = this.sample(copyIn, copyOut);
        maxP99 = Math.max(maxP99, s.produceP99Ms);
        p99Sum += s.produceP99Ms;
        p99Samples++;
        const breach = s.produceP99Ms > quiet.produceP99Ms * this.o.executor.breach.produceP99;
        if (breach) this.breachSince ??= this.now;
        else this.breachSince = null;
        this.apply(this.executor.handle({ kind: 'metrics', now: this.now, sample: s }));
        if (this.executor.state === 'paused') this.breachSince = null;
      } else {
        this.apply(this.executor.handle({ kind: 'tick', now: this.now }));
      }
    }
    return {
      state: this.executor.state,
      moves: this.plan.moves.length,
      replicaMoves: this.plan.moves.reduce((sum, m) => sum + m.to.filter((b) => !m.from.includes(b)).length, 0),
      leadershipChanges: this.plan.leadershipChanges.length,
      bytesMoved: this.bytesMoved,
      batches: this.batches,
      pauses: this.pauses,
      simulatedSeconds: this.now / 1000,
      baselineP99Ms: quiet.produceP99Ms,
      maxP99Ms: maxP99,
      meanP99Ms: p99Samples === 0 ? quiet.produceP99Ms : p99Sum / p99Samples,
      maxP99Ratio: maxP99 / quiet.produceP99Ms,
      worstPauseDelayMs: this.worstPauseDelayMs,
      wallMs: Date.now() - wall,
    };
  }

  /** Every partition the plan touched, as the simulation ended. */
  assignment(): Map<string, readonly number[]> {
    return new Map(this.replicas);
  }
}

/** The 99th percentile of values weighted by their weights. */
function weightedP99(points: [number, number][]): number {
  const total = points.reduce((sum, [, w]) => sum + w, 0);
  if (total <= 0) return Math.max(0, ...points.map(([v]) => v));
  points.sort((a, b) => a[0] - b[0]);
  let seen = 0;
  for (const [v, w] of points) {
    seen += w;
    if (seen >= 0.99 * total) return v;
  }
  return points[points.length - 1]![0];
}

export function simulateExpansion(input: PlanInput, plan: ExpansionPlan, options: SimOptions): SimResult {
  return new ExpansionSim(input, plan, options).run();
}
