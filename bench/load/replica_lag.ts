// Replication lag sampler (bench process, main thread): every `intervalMs`, GET /v1/actors on
// every running broker of a cluster at once, and for each partition of one topic records the
// leader's log end minus each follower's log end (messages) and the leader's log end minus its
// high watermark. The answers of one sample are not one instant: the brokers are asked
// concurrently, so a sample can be off by what arrives within one admin round trip (a negative
// difference is kept as 0). Bounds: one sample in flight at a time; at most MAX_SAMPLES values.
import { performance } from 'node:perf_hooks';
import type { BrokerProcess, ReplicaState } from '../../src/bench/broker_process.js';

const MAX_SAMPLES = 1_000_000;

export interface LagSamples {
  /** Leader log end − follower log end, one value per (sample, partition, follower). */
  readonly followerLag: number[];
  /** Leader log end − high watermark, one value per (sample, partition). */
  readonly hwLag: number[];
  readonly samples: number;
  readonly failedSamples: number;
}

export class LagSampler {
  private readonly followerLag: number[] = [];
  private readonly hwLag: number[] = [];
  private samples = 0;
  private failedSamples = 0;
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(private readonly brokers: readonly BrokerProcess[], private readonly topic: string, private readonly intervalMs: number) {}

  /** Starts sampling after `delayMs` (the warm-up). */
  start(delayMs: number): void {
    this.running = true;
    this.loop = this.run(delayMs);
  }

  async stop(): Promise<LagSamples> {
    this.running = false;
    await this.loop;
    return { followerLag: this.followerLag, hwLag: this.hwLag, samples: this.samples, failedSamples: this.failedSamples };
  }

  private async run(delayMs: number): Promise<void> {
    await new Promise((r) => setTimeout(r, delayMs));
    while (this.running && this.followerLag.length < MAX_SAMPLES) {
      const t0 = performance.now();
      try {
        this.record(await Promise.all(this.brokers.map((b) => b.replicas())));
      } catch {
        this.failedSamples++;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, this.intervalMs - (performance.now() - t0))));
    }
  }

  private record(perBroker: readonly (readonly ReplicaState[])[]): void {
    const lag = replicaLag(perBroker, this.topic);
    this.followerLag.push(...lag.followerLag);
    this.hwLag.push(...lag.hwLag);
    this.samples++;
  }
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
