// Profiled broker runs (bench process, main thread): one load against a broker started under
// `node --cpu-prof` (profiles kept in a results dir), summarized over the load window only.
// The load is a bench scenario, or librdkafka's producer (the client DESIGN.md §11 names).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess } from '../src/bench/broker_process.js';
import { buildRdkafkaBench, runRdkafkaBench } from './peers.js';
import { monotonicUs, summarizeProfileDir } from './profile.js';
import type { ProfileRun, Window } from './profile.js';
import { waitQuiet } from './quiet.js';
import { runScenarioOnce } from './scenarios.js';
import type { RunSettings, Scenario } from './scenarios.js';

/** --profile-scenario value that profiles under the librdkafka producer (1 KiB, acks=1). */
export const RDKAFKA_PROFILE = 'rdkafka-1k';

export interface ProfiledLoad extends ProfileRun {
  /** What the load achieved while profiled (profiling slows the broker). */
  readonly load: string;
  /** The samples summarized (monotonic µs), null = the whole profile. */
  readonly window: Window | null;
}

function profilerArgs(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '250'];
}

export async function profileScenario(sc: Scenario, s: RunSettings, dir: string, topN: number): Promise<ProfiledLoad> {
  const outcome = await runScenarioOnce(sc, { ...s, brokerNodeArgs: profilerArgs(dir) });
  const load = Object.entries(outcome.metrics).slice(0, 4).map(([k, x]) => `${k}=${Number.isInteger(x) ? x : x.toPrecision(4)}`).join(' ');
  const window = outcome.loadWindow ?? null;
  return { dir, threads: summarizeProfileDir(dir, topN, window), load, window };
}

export async function profileUnderRdkafka(s: RunSettings, dir: string, topN: number, peersDir: string, messages: number): Promise<ProfiledLoad> {
  const work = mkdtempSync(join(tmpdir(), 'sluice-bench-prof-'));
  try {
    const built = await buildRdkafkaBench(peersDir, work);
    if ('error' in built) throw new Error(`librdkafka producer: ${built.error}`);
    const broker = await BrokerProcess.start({ flush: 'never', shards: s.shards, nodeArgs: profilerArgs(dir) });
    let window: Window = { fromUs: 0, toUs: 0 };
    let load: string;
    try {
      await waitQuiet(s.quietWaitS);
      window = { fromUs: monotonicUs(), toUs: 0 };
      const r = await runRdkafkaBench(built.bin, `${broker.host}:${broker.kafkaPort}`, 'rdk-profile', messages, 1024);
      window = { ...window, toUs: monotonicUs() };
      load = 'error' in r ? `librdkafka failed: ${r.error}` : r.line;
    } finally {
      await broker.stop();
    }
    return { dir, threads: summarizeProfileDir(dir, topN, window), load, window };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
