// Replication lag sampler (bench process): every `intervalMs`, GET /v1/actors on every running
// broker of a cluster at once, and for each partition of one topic records the leader's log end
// minus each follower's log end (messages) and the leader's log end minus its high watermark. The
// answers of one sample are not one instant: the brokers are asked concurrently, so a sample can
// be off by what arrives within one admin round trip (a negative difference is kept as 0).
// Threads: LagSampler lives on the bench's main thread; the sampling loop runs on a worker thread
// of its own (this module, started with a SamplerData), because the e2e latency load stamps and
// reads records on the main thread, and the sampler's HTTP round trips and JSON parses there
// could delay its consumer and add their time to the latency it measures. (In an A/B of two
// runs per side the difference was within the run-to-run spread; the confound is gone either way.)
// Bounds: one sample in flight at a time; at most MAX_SAMPLES values; stop() ends the worker.
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { replicasAt, type BrokerProcess, type ReplicaState } from '../../src/bench/broker_process.js';

const MAX_SAMPLES = 1_000_000;

export interface LagSamples {
  /** Leader log end − follower log end, one value per (sample, partition, follower). */
  readonly followerLag: number[];
  /** Leader log end − high watermark, one value per (sample, partition). */
  readonly hwLag: number[];
  readonly samples: number;
  readonly failedSamples: number;
}

/** What the worker is started with. */
interface SamplerData {
  readonly kind: 'replica-lag-sampler';
  readonly adminPorts: readonly number[];
  readonly topic: string;
  readonly intervalMs: number;
  readonly delayMs: number;
}

export class LagSampler {
  private worker: Worker | null = null;
  private result: Promise<LagSamples> | null = null;

  constructor(private readonly brokers: readonly Pick<BrokerProcess, 'adminPort'>[], private readonly topic: string, private readonly intervalMs: number) {}

  /** Starts sampling after `delayMs` (the warm-up). */
  start(delayMs: number): void {
    const data: SamplerData = { kind: 'replica-lag-sampler', adminPorts: this.brokers.map((b) => b.adminPort), topic: this.topic, intervalMs: this.intervalMs, delayMs };
    const worker = new Worker(new URL(import.meta.url), { workerData: data });
    this.worker = worker;
    this.result = new Promise<LagSamples>((resolve, reject) => {
      worker.once('message', (m: LagSamples) => resolve(m));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`replica lag sampler exited (${code}) before its answer`)));
    });
  }

  /** Ends sampling (after the sample in flight) and returns every sample taken. */
  async stop(): Promise<LagSamples> {
    if (this.worker === null || this.result === null) return { followerLag: [], hwLag: [], samples: 0, failedSamples: 0 };
    this.worker.postMessage('stop');
    try {
      return await this.result;
    } finally {
      await this.worker.terminate();
      this.worker = null;
    }
  }
}

/** The worker's loop: samples until told to stop, then posts what it has. */
async function sample(d: SamplerData): Promise<void> {
  const port = parentPort;
  if (port === null) return;
  let running = true;
  const stopped = new Promise<void>((resolve) => port.once('message', () => {
    running = false;
    resolve();
  }));
  const pause = (ms: number): Promise<unknown> => Promise.race([stopped, new Promise((r) => setTimeout(r, ms).unref())]);
  const followerLag: number[] = [];
  const hwLag: number[] = [];
  let samples = 0;
  let failedSamples = 0;
  await pause(d.delayMs);
  while (running && followerLag.length < MAX_SAMPLES) {
    const t0 = performance.now();
    try {
      const lag = replicaLag(await Promise.all(d.adminPorts.map((p) => replicasAt(p))), d.topic);
      for (const v of lag.followerLag) followerLag.push(v);
      for (const v of lag.hwLag) hwLag.push(v);
      samples++;
    } catch {
      failedSamples++;
    }
    await pause(Math.max(0, d.intervalMs - (performance.now() - t0)));
  }
  // Past MAX_SAMPLES the answer still waits until it is asked for.
  await stopped;
  port.postMessage({ followerLag, hwLag, samples, failedSamples } satisfies LagSamples);
}

/**
 * One sample's lags for `topic` from every broker's replica list: per partition whose leader is in
 * the sample, its log end minus each follower's log end, and its log end minus its high watermark
 * (a negative difference, from the brokers answering at slightly different times, counts as 0).
 */
export function replicaLag(perBroker: readonly (readonly ReplicaState[])[], topic: string): { followerLag: number[]; hwLag: number[] } {
  const mine = perBroker.flat().filter((r) => r.topic === topic);
  const followerLag: number[] = [];
  const hwLag: number[] = [];
  for (const leader of mine.filter((r) => r.role === 'leader')) {
    hwLag.push(Math.max(0, leader.logEndOffset - leader.highWatermark));
    for (const f of mine) {
      if (f.partition === leader.partition && f.role === 'follower') followerLag.push(Math.max(0, leader.logEndOffset - f.logEndOffset));
    }
  }
  return { followerLag, hwLag };
}

if (!isMainThread && (workerData as SamplerData | null)?.kind === 'replica-lag-sampler') void sample(workerData as SamplerData);
