// Bench entry point (`npm run bench` -> node dist/bench/run.js [SCENARIO|GROUP ...] [options]).
// Bench process, main thread. Runs each selected scenario R times, each time against a freshly
// started broker child process, prints median (min–max) tables, optionally runs the peers in the
// same sitting (with Sluice/peer ratios) and a CPU profile of the broker, and writes everything
// to bench/results/<timestamp>.json. Only 127.0.0.1 is used; every load is bounded.
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GROUP_SCENARIOS } from './group_scenarios.js';
import { PEER_NAMES, runPeers } from './peers.js';
import type { PeerResults } from './peers.js';
import { profileText } from './profile.js';
import { RDKAFKA_PROFILE, profileScenario, profileUnderRdkafka } from './profile_run.js';
import type { ProfiledLoad } from './profile_run.js';
import { ratioRows, ratioTable, peerTable } from './ratios.js';
import type { RatioRow } from './ratios.js';
import { newResultsPath, scenarioTables, summarize, writeResults } from './report.js';
import type { ScenarioReport, Spread } from './report.js';
import { ALL_SCENARIOS, SCENARIOS, runScenarioOnce } from './scenarios.js';
import type { RunSettings, Scenario, ScenarioParams } from './scenarios.js';

const USAGE = `usage: node dist/bench/run.js [SCENARIO|GROUP ...] [options]
groups:  main (default: every data-path scenario), produce (every produce-*), groups (offset
         commits/s, rebalance pause KIP-848 vs eager), peers (Sluice figures the
         peers are compared with + librdkafka/kcat against Sluice + Redis/NATS/Node peer
         scripts + ratios), peers-only (the peers without Sluice scenarios), all (main + groups
         + peers), profile (broker --cpu-prof under one scenario), list (print the scenarios)
options: --repeat N (3)  --shards N (the broker's default)  --quiet-wait S (60; 0 = no quiet gate)
         --messages N  --duration-s S  --warmup-s S  --size BYTES  --batch RECORDS
         --connections N  --inflight N  --partitions N  --acks 1|all  --flush always|never|MS
         --rate MSGS_S (e2e: default half the measured max; rebalance: 2000)  --rate-fraction F
         --group-count N (commit groups, 100)  --commits N (partition-offsets, 50000000)
         --rdkafka-messages N (1000000)  --rdkafka-warmup-bytes N (4294967296: produce load a
         broker takes before its warmed librdkafka runs)  --peers-dir DIR (/work/shared/peers)
         --peer rdkafka,rdkafka-e2e,kcat,redis,nats,node-net,iperf3,pagecache,fio (default: all)
         --profile-scenario NAME|rdkafka-1k (produce-1k-acks1)  --profile-top N (15)
         --request-timeout-ms MS (30000)  --produce-version V (default: highest common)
Scenario options override every selected scenario that has that parameter.`;

const OPTIONS = {
  repeat: { type: 'string' }, shards: { type: 'string' }, 'quiet-wait': { type: 'string' },
  messages: { type: 'string' }, 'duration-s': { type: 'string' }, 'warmup-s': { type: 'string' },
  size: { type: 'string' }, batch: { type: 'string' }, connections: { type: 'string' }, inflight: { type: 'string' },
  partitions: { type: 'string' }, acks: { type: 'string' }, flush: { type: 'string' }, rate: { type: 'string' },
  'rate-fraction': { type: 'string' }, 'rdkafka-messages': { type: 'string' }, 'rdkafka-warmup-bytes': { type: 'string' }, 'peers-dir': { type: 'string' }, peer: { type: 'string' },
  'profile-scenario': { type: 'string' }, 'profile-top': { type: 'string' }, 'request-timeout-ms': { type: 'string' },
  'produce-version': { type: 'string' }, 'group-count': { type: 'string' }, commits: { type: 'string' }, help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function num(v: string | undefined, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number (got "${v}")`);
  return n;
}

/** Scenario parameters overridden by flags (only the keys that scenario's kind has). */
function override(sc: Scenario, v: Values): Scenario {
  const o: Record<string, number | string> = {};
  const set = (key: string, raw: string | undefined, map: (s: string) => number | string): void => {
    if (raw !== undefined && key in sc.params) o[key] = map(raw);
  };
  const int = (name: string) => (s: string): number => num(s, name, 0);
  set('messages', v.messages, int('messages'));
  set('durationMs', v['duration-s'], (s) => num(s, 'duration-s', 0) * 1000);
  set('warmupMs', v['warmup-s'], (s) => num(s, 'warmup-s', 0) * 1000);
  set('recordBytes', v.size, int('size'));
  set('batchRecords', v.batch, int('batch'));
  set('connections', v.connections, int('connections'));
  set('inflight', v.inflight, int('inflight'));
  set('partitions', v.partitions, int('partitions'));
  set('acks', v.acks, (s) => (s === 'all' || s === '-1' ? -1 : s === '1' ? 1 : Number.NaN));
  set('flush', v.flush, (s) => s);
  set('rate', v.rate, int('rate'));
  set('rateFraction', v['rate-fraction'], int('rate-fraction'));
  set('groupCount', v['group-count'], int('group-count'));
  set('commits', v.commits, int('commits'));
  if (Number.isNaN(o['acks'])) throw new Error('--acks must be 1 or all');
  return { ...sc, params: { ...sc.params, ...o } as ScenarioParams };
}

interface Selection {
  scenarios: Scenario[];
  peers: boolean;
  profile: boolean;
}

const PEER_SCENARIOS = ['produce-1k-acks1', 'produce-1k-acks1-c4', 'produce-100b-acks1', 'produce-100b-acks1-c4', 'catchup-1k'];

function select(names: readonly string[]): Selection {
  const picked = new Set<string>();
  const sel: Selection = { scenarios: [], peers: false, profile: false };
  for (const name of names.length === 0 ? ['main'] : names) {
    if (name === 'main' || name === 'all') SCENARIOS.forEach((s) => picked.add(s.name));
    if (name === 'produce') SCENARIOS.filter((s) => s.params.kind === 'produce').forEach((s) => picked.add(s.name));
    if (name === 'groups' || name === 'all') GROUP_SCENARIOS.forEach((s) => picked.add(s.name));
    if (name === 'peers' || name === 'all') PEER_SCENARIOS.forEach((n) => picked.add(n));
    if (name === 'peers' || name === 'all' || name === 'peers-only') sel.peers = true;
    if (name === 'profile') sel.profile = true;
    if (['main', 'all', 'produce', 'groups', 'peers', 'peers-only', 'profile'].includes(name)) continue;
    if (!ALL_SCENARIOS.some((s) => s.name === name)) throw new Error(`unknown scenario or group "${name}" (try: list)`);
    picked.add(name);
  }
  sel.scenarios = ALL_SCENARIOS.filter((s) => picked.has(s.name));
  return sel;
}

function peerList(raw: string | undefined): string[] {
  const list = raw === undefined ? [] : raw.split(',').map((x) => x.trim()).filter((x) => x !== '');
  const bad = list.filter((x) => !(PEER_NAMES as readonly string[]).includes(x));
  if (bad.length > 0) throw new Error(`unknown --peer ${bad.join(',')} (known: ${PEER_NAMES.join(',')})`);
  return list;
}

function progress(name: string, i: number, r: number, metrics: Record<string, number>): string {
  const shown = Object.entries(metrics).slice(0, 6).map(([k, x]) => `${k}=${Number.isInteger(x) ? x : x.toPrecision(4)}`);
  return `[${name}] run ${i}/${r}: ${shown.join(' ')}`;
}

async function runScenarios(list: readonly Scenario[], repeat: number, s: RunSettings): Promise<ScenarioReport[]> {
  const reports: ScenarioReport[] = [];
  for (const sc of list) {
    const runs: Record<string, number>[] = [];
    const notes: string[] = [];
    const errors: string[] = [];
    for (let i = 1; i <= repeat; i++) {
      try {
        const out = await runScenarioOnce(sc, s);
        runs.push(out.metrics);
        notes.push(...out.notes.map((n) => `run ${i}: ${n}`));
        console.log(progress(sc.name, i, repeat, out.metrics) + (out.notes.length > 0 ? `  (${out.notes.join('; ')})` : ''));
      } catch (err) {
        errors.push(`run ${i}: ${(err as Error).message}`);
        console.log(`[${sc.name}] run ${i}/${repeat} FAILED: ${(err as Error).message}`);
      }
    }
    reports.push({ name: sc.name, kind: sc.params.kind, description: sc.description, params: sc.params, runs, notes, errors, summary: summarize(runs) });
  }
  return reports;
}

const PEERS_DIR = '/work/shared/peers';

/**
 * Produce load a broker takes before its warmed librdkafka runs. V8 tiers a function up to
 * optimized code after enough calls, and the request path runs once per request (about 1 MB at
 * linger 5 ms): here the broker's user CPU per message fell run after run until about 4 GB had
 * gone through (100 B: 0.117 to 0.032 µs, 1 KiB: 0.64 to 0.23), then held.
 */
const RDKAFKA_WARMUP_BYTES = 4 * 1024 ** 3;

/** Peers in this sitting, compared with this invocation's Sluice figures. */
async function peerPhase(v: Values, reports: readonly ScenarioReport[], settings: RunSettings, repeat: number): Promise<{ peers: PeerResults; ratios: RatioRow[] }> {
  const peers = await runPeers({
    peersDir: v['peers-dir'] ?? PEERS_DIR, runs: repeat, shards: settings.shards, quietWaitS: settings.quietWaitS,
    rdkafkaMessages: Math.floor(num(v['rdkafka-messages'], 'rdkafka-messages', 1_000_000)),
    rdkafkaWarmupBytes: Math.floor(num(v['rdkafka-warmup-bytes'], 'rdkafka-warmup-bytes', RDKAFKA_WARMUP_BYTES)), only: peerList(v.peer),
  }, (line) => console.log(`[peers] ${line}`));
  const ratios = ratioRows(new Map<string, Record<string, Spread>>(reports.map((r) => [r.name, r.summary])), peers.figures);
  console.log(`\n${peerTable(peers.figures)}`);
  for (const u of peers.unavailable) console.log(`peer not run: ${u}`);
  console.log(`\n${ratioTable(ratios)}`);
  return { peers, ratios };
}

/** One profiled broker run; profiles are kept next to the results file. */
async function profilePhase(v: Values, settings: RunSettings, resultsPath: string): Promise<ProfiledLoad> {
  const name = v['profile-scenario'] ?? 'produce-1k-acks1';
  const dir = join(resultsPath.replace(/\.json$/, ''), 'profiles');
  const topN = Math.floor(num(v['profile-top'], 'profile-top', 15));
  let profile: ProfiledLoad;
  if (name === RDKAFKA_PROFILE) {
    profile = await profileUnderRdkafka(settings, dir, topN, v['peers-dir'] ?? PEERS_DIR,
      Math.floor(num(v['rdkafka-messages'], 'rdkafka-messages', 1_000_000)));
  } else {
    const base = ALL_SCENARIOS.find((s) => s.name === name);
    if (base === undefined) throw new Error(`unknown --profile-scenario ${name}`);
    profile = await profileScenario(override(base, v), settings, dir, topN);
  }
  console.log(`\nbroker CPU profile under ${name}: ${profile.load}; profiles in ${dir}`);
  console.log(profileText(profile));
  return profile;
}

async function main(): Promise<number> {
  const { values: v, positionals } = parseArgs({ options: OPTIONS, allowPositionals: true, strict: true });
  if (v.help === true) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.includes('list')) {
    for (const s of ALL_SCENARIOS) console.log(`${s.name.padEnd(30)} ${s.description}`);
    return 0;
  }
  const sel = select(positionals);
  const repeat = Math.max(1, Math.floor(num(v.repeat, 'repeat', 3)));
  const settings: RunSettings = {
    shards: v.shards === undefined ? undefined : Math.max(1, Math.floor(num(v.shards, 'shards', 1))),
    quietWaitS: num(v['quiet-wait'], 'quiet-wait', 60),
    requestTimeoutMs: num(v['request-timeout-ms'], 'request-timeout-ms', 30_000),
    produceVersion: Math.floor(num(v['produce-version'], 'produce-version', 0)),
  };
  const scenarios = sel.scenarios.map((s) => override(s, v));
  const startedAt = new Date().toISOString();
  console.log(`sluice bench: ${scenarios.map((s) => s.name).join(', ') || '(no scenarios)'}${sel.peers ? ' + peers' : ''}${sel.profile ? ' + profile' : ''}; repeat ${repeat}; shards ${settings.shards ?? 'the broker default'}`);

  const reports = await runScenarios(scenarios, repeat, settings);
  if (reports.length > 0) console.log(`\n${scenarioTables(reports)}`);

  const { peers, ratios } = sel.peers ? await peerPhase(v, reports, settings, repeat) : { peers: null, ratios: [] };
  const resultsPath = newResultsPath();
  const profile = sel.profile ? await profilePhase(v, settings, resultsPath) : null;

  const env = { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', loadavg: loadavg() };
  writeResults(resultsPath, { startedAt, finishedAt: new Date().toISOString(), env, settings, repeat, scenarios: reports, peers, ratios, profile });
  console.log(`\nresults: ${resultsPath}`);
  return reports.some((r) => r.runs.length === 0) ? 1 : 0;
}

main().then((code) => {
  process.exitCode = code;
}, (err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 2;
});
