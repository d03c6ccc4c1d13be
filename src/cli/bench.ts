// `sluice bench` (main thread of the CLI process): OMB-style workloads (fixed rates, a max-rate
// ramp, a backlog drain; 1 KiB and 100 B; acks 1 and all) against a broker it starts itself (a
// child `sluice start`, so its CPU is read apart from the load's) or the one --brokers names, and
// with --vs the peers (Redis Streams, NATS JetStream) started beside it in the same sitting.
// Writes one OMB TestResult JSON per workload and driver plus report.html into --out, and prints
// the results and the Sluice/peer ratios. Everything it starts it stops, also on failure.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BrokerProcess } from '../bench/broker_process.js';
import { htmlReport, ratioRows, ratioTable, resultTable } from '../bench/bench_report.js';
import { PEER_IDS, peerUnavailable, startPeer } from '../bench/peer_servers.js';
import type { PeerId } from '../bench/peer_servers.js';
import { FULL_PLAN, QUICK_PLAN, peerTarget, runWorkloads, sluiceTarget } from '../bench/workloads.js';
import type { BenchResult } from '../bench/workloads.js';
import { UsageError, intOption, optionValue, parseArgs } from './args.js';
import { formatOption } from './output.js';
import type { OptionSpec } from './args.js';
import { brokerList } from './connect.js';
import type { CliIo } from './io.js';

export const BENCH_HELP = `Usage: sluice bench [options]

Runs OMB-style workloads and writes Open Messaging Benchmark result JSON (one file per workload
and driver) and report.html (plots as inline SVG) into --out:
  fixed rates        end-to-end and publish latency p50/p99/p99.9/p99.99 at set rates
  max-rate ramp      the rate steps up until p99 or the backlog explodes
  backlog drain      N MiB published with no consumer, then timed while a consumer reads it
each for 1 KiB and 100 B messages, fixed rates for acks=1 and acks=all, with the CPU per message
and per MB of the broker (and of each peer) from /proc.

Options:
  --quick                  a short run (about 30 s for Sluice alone)
  --vs redis,nats          also run the peers' servers, when installed, in the same sitting
  --brokers HOST:PORT      bench a running broker instead of starting one (its CPU is not read)
  --shards N               shard threads of the broker it starts [1]
  --out DIR                where the results go [./sluice-bench-<time>]
  --format text|json       json: print the results and ratios as JSON [text]`;

const OPTIONS: readonly OptionSpec[] = [
  { name: 'quick', switch: true }, { name: 'vs' }, { name: 'brokers' }, { name: 'shards' }, { name: 'out' }, { name: 'format' },
];

function peersOf(raw: string | undefined): PeerId[] {
  if (raw === undefined || raw === '') return [];
  return raw.split(',').map((p) => {
    const id = p.trim();
    if (!(PEER_IDS as readonly string[]).includes(id)) throw new UsageError(`--vs: unknown peer "${id}" (known: ${PEER_IDS.join(', ')})`);
    return id as PeerId;
  });
}

const fileName = (r: BenchResult): string => `${r.workload}-${r.driver}.json`;

export async function runBench(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseArgs(argv, OPTIONS, false);
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${parsed.positionals[0] ?? ''}`);
  const format = formatOption(parsed);
  const plan = optionValue(parsed, 'quick') === 'true' ? QUICK_PLAN : FULL_PLAN;
  const peers = peersOf(optionValue(parsed, 'vs'));
  const shards = intOption(parsed, 'shards', 1, 64) ?? 1;
  const outDir = resolve(optionValue(parsed, 'out') ?? `sluice-bench-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const given = optionValue(parsed, 'brokers') === undefined ? null : brokerList(parsed, io.env)[0] ?? null;
  const progress = (what: string): void => io.progress?.(what);

  const results: BenchResult[] = [];
  const skipped: string[] = [];
  const facts: string[] = [`plan: ${plan === QUICK_PLAN ? 'quick' : 'full'}`, `node ${process.version}`];
  const broker = given === null ? await BrokerProcess.start({ flush: 'never', shards }) : null;
  try {
    const host = given?.host ?? '127.0.0.1';
    const port = given?.port ?? broker?.kafkaPort ?? 0;
    facts.push(broker === null ? `Sluice at ${host}:${port} (given; CPU not read)` : `Sluice started here: ${shards} shard(s), flush never, pid ${broker.pid}`);
    const sluice = await sluiceTarget(host, port, broker?.pid ?? null);
    try {
      results.push(...await runWorkloads(sluice, plan, progress));
    } finally {
      await sluice.close();
    }
  } finally {
    await broker?.stop();
  }
  for (const id of peers) {
    const why = peerUnavailable(id);
    if (why !== null) {
      skipped.push(why);
      continue;
    }
    const server = await startPeer(id);
    try {
      facts.push(`${server.label}, pid ${server.pid}, port ${server.port}`);
      const target = peerTarget(server, plan);
      try {
        results.push(...await runWorkloads(target, plan, progress));
      } finally {
        target.close();
      }
    } finally {
      await server.stop();
    }
  }
  io.progress?.('');

  mkdirSync(outDir, { recursive: true });
  for (const r of results) writeFileSync(join(outDir, fileName(r)), `${JSON.stringify(r, null, 2)}\n`);
  const reportPath = join(outDir, 'report.html');
  writeFileSync(reportPath, await htmlReport(results, { title: `sluice bench, ${new Date().toISOString()}`, facts, skipped }));
  const ratios = ratioRows(results);
  if (format === 'json') {
    io.out(JSON.stringify({ out: outDir, report: reportPath, files: results.map(fileName), skipped, ratios }, null, 2));
    return 0;
  }
  for (const s of skipped) io.out(`skipped: ${s}`);
  io.out(resultTable(results));
  if (peers.length > 0) io.out(`\n${ratios.length === 0 ? 'no peer ran: no ratios' : ratioTable(ratios)}`);
  io.out(`\nwrote ${results.length} OMB result files and ${reportPath}`);
  return 0;
}
