// The `sluice` command line (main thread of the CLI process): dispatches to start, config print,
// topic, group and cluster verbs, prints help, and maps failures to exit codes (errors.ts) — 1 for operational
// failures (Kafka errors print their error name), 2 for bad usage or configuration; `cluster
// health` returns 3 for an unhealthy cluster itself.
// Each verb keeps its help text beside it. Runs itself when it is the process entry point (as
// bin/sluice and the single executable run it).

import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { runsEmbedded } from '../native/embedded.js';
import { UsageError, parseArgs } from './args.js';
import { configPrintHelp, runConfigPrint } from './config_print.js';
import { describeFailure } from './errors.js';
import { printHelp, wantsHelp } from './help.js';
import { processIo } from './io.js';
import type { CliIo } from './io.js';
import { BENCH_HELP, runBench } from './bench.js';
import { DEV_CLUSTER_HELP, runDevCluster } from './dev_cluster.js';
import { GROUP_HELP, runGroup } from './group.js';
import { runStart, startHelp } from './start.js';
import { CLUSTER_HELP, runCluster } from './cluster.js';
import { TOPIC_HELP, runTopic } from './topic.js';
import { PRODUCE_HELP, runProduce } from './produce.js';
import { CONSUME_HELP, runConsume } from './consume.js';
import { REASSIGN_HELP, runReassign } from './reassign.js';
import { versionInfo, versionText } from './version.js';
import { USER_HELP, runUser } from './user.js';
import { ACL_HELP, runAcl } from './acl.js';
import { QUOTA_HELP, runQuota } from './quota.js';

const MAIN_HELP = `Usage: sluice <command> [options]

Commands:
  start                  run a broker node until SIGTERM/SIGINT
  config print           print the resolved configuration and where each value came from
  topic create NAME      create a topic
  topic list             list topics
  topic describe NAME    show a topic's partitions, their replication status and configuration
  topic alter-config NAME  set (--set k=v) or remove (--delete k) topic configs
  topic delete NAME      delete a topic
  produce TOPIC          produce stdin lines (or --value) as records; keys, headers, JSON input
  consume TOPIC[,TOPIC]  print records from an offset (start|end|N|+N|-N|@time|@-1h), or as a group
  group list             list consumer groups
  group describe GROUP   show a group's members, committed offsets and lag
  group seek GROUP       set an inactive group's committed offsets
  group delete GROUP...  delete inactive groups and their offsets
  cluster describe       show the cluster id, controller and brokers
  cluster status         show each broker's state (running, warming, fenced) and its replicas
  cluster health         check replication: exit code 3 while anything is under-replicated,
                         leaderless or offline
  cluster elect-leaders  move partition leaders back to their preferred replicas
  cluster remove-broker ID  unregister a drained broker (refused while it holds replicas)
  cluster add-broker ID --no-move  wait for a new broker; only new partitions go to it
  reassign plan          plan the fewest replica moves to balance brokers (or drain --remove ones)
  reassign apply         execute the plan online: throttled, cold first, pausing on a p99 breach
  reassign status        show a reassignment's progress, rate, ETA and p99 against the baseline
  reassign pause|resume|cancel|rollback  control the running reassignment
  user create NAME       set a user's SCRAM credential (--data-dir: offline, before start)
  user delete NAME       delete a user's SCRAM credential
  user list              list users with SCRAM credentials
  acl add|list|remove    manage ACLs (--allow-principal/--deny-principal, --operation, --topic/--group/--cluster)
  quota alter            set or remove client quotas of a user and/or client id, or an ip
  quota describe         list client quotas
  bench                  OMB-style workloads (--vs redis,nats: the peers beside us), JSON and HTML report
  dev cluster up [N]     start (or restart) a local cluster of N nodes
  dev cluster add [K]    add K broker-only nodes to the local cluster
  dev cluster status     show each local node's quorum role, leader, lag and health
  dev cluster down       stop the local cluster
  version, --version     print the version, commit, Node version and I/O backend

Run 'sluice <command> --help' for a command's options. Every verb takes --format
text|wide|json|yaml; cluster status|health, topic describe and group describe take --watch [SECONDS].
Exit codes: 0 success, 1 operational failure (broker error or no broker reachable), 2 bad usage
or configuration, 3 unhealthy cluster (cluster health).`;

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.out(MAIN_HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === 'version' || command === '--version' || command === '-V') {
    io.out(versionText(await versionInfo()));
    return 0;
  }
  if (command === 'start') {
    if (wantsHelp(argv.slice(1))) return printHelp(io, startHelp());
    const parsed = parseArgs(argv.slice(1), [], true);
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${parsed.positionals[0] ?? ''}`);
    return runStart(parsed.configArgv, io);
  }
  if (command === 'config') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, configPrintHelp());
    if (sub !== 'print') throw new UsageError(`unknown config command "${sub}"`);
    if (wantsHelp(rest)) return printHelp(io, configPrintHelp());
    runConfigPrint(rest, io);
    return 0;
  }
  if (command === 'topic') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, TOPIC_HELP[''] ?? '');
    if (wantsHelp(rest)) return printHelp(io, TOPIC_HELP[sub] ?? TOPIC_HELP[''] ?? '');
    return runTopic(sub, rest, io);
  }
  if (command === 'produce' || command === 'consume') {
    if (wantsHelp(argv.slice(1))) return printHelp(io, command === 'produce' ? PRODUCE_HELP : CONSUME_HELP);
    return command === 'produce' ? runProduce(argv.slice(1), io) : runConsume(argv.slice(1), io);
  }
  if (command === 'group') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, GROUP_HELP[''] ?? '');
    if (wantsHelp(rest)) return printHelp(io, GROUP_HELP[sub] ?? GROUP_HELP[''] ?? '');
    return runGroup(sub, rest, io);
  }
  if (command === 'cluster') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, CLUSTER_HELP[''] ?? '');
    if (wantsHelp(rest)) return printHelp(io, CLUSTER_HELP[sub] ?? CLUSTER_HELP[''] ?? '');
    return runCluster(sub, rest, io);
  }
  if (command === 'user') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, USER_HELP[''] ?? '');
    if (wantsHelp(rest)) return printHelp(io, USER_HELP[sub] ?? USER_HELP[''] ?? '');
    await runUser(sub, rest, io);
    return 0;
  }
  if (command === 'acl') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, ACL_HELP[''] ?? '');
    if (wantsHelp(rest)) return printHelp(io, ACL_HELP[sub] ?? ACL_HELP[''] ?? '');
    await runAcl(sub, rest, io);
    return 0;
  }
  if (command === 'quota') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, QUOTA_HELP[''] ?? '');
    if (wantsHelp(rest)) return printHelp(io, QUOTA_HELP[sub] ?? QUOTA_HELP[''] ?? '');
    await runQuota(sub, rest, io);
    return 0;
  }
  if (command === 'reassign') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, REASSIGN_HELP[''] ?? '');
    if (wantsHelp(rest)) return printHelp(io, REASSIGN_HELP[sub] ?? REASSIGN_HELP[''] ?? '');
    return runReassign(sub, rest, io);
  }
  if (command === 'bench') {
    if (wantsHelp(argv.slice(1))) return printHelp(io, BENCH_HELP);
    return runBench(argv.slice(1), io);
  }
  if (command === 'dev') {
    if (sub === undefined || sub === '--help' || sub === '-h') return printHelp(io, DEV_CLUSTER_HELP[''] ?? '');
    if (sub !== 'cluster') throw new UsageError(`unknown dev command "${sub}"`);
    const [verb, ...args] = rest;
    if (verb === undefined || verb === '--help' || verb === '-h') return printHelp(io, DEV_CLUSTER_HELP[''] ?? '');
    if (wantsHelp(args)) return printHelp(io, DEV_CLUSTER_HELP[verb] ?? DEV_CLUSTER_HELP[''] ?? '');
    return runDevCluster(verb, args, io);
  }
  throw new UsageError(`unknown command "${command}"`);
}

/** Runs one CLI invocation and returns its exit code (`start` returns only if startup fails). */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    const failure = describeFailure(err);
    if (failure !== null) {
      io.err(`sluice: ${failure.message}`);
      return failure.exitCode;
    }
    io.err(`sluice: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

// Inside the single executable this module is the bundle's entry: the executable is the CLI.
if (runsEmbedded() || isEntryPoint()) {
  runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
