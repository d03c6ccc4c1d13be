// `sluice cluster describe|status|health|elect-leaders|remove-broker|add-broker` (main thread of the CLI process): the
// cluster's id, controller and brokers; each registered broker's standing (running, warming up
// after joining, fenced) with the replicas it hosts, how many are in sync and how many it leads;
// its replication health (under-replicated, leaderless and offline
// replicas over every partition, judged in health.ts) with an exit code scripts and rolling
// restarts can wait on; and preferred (or --unclean) leader elections of one partition, a topic's
// partitions or every partition; removing and adding brokers in cluster_members.ts. Text tables or JSON.

import { setTimeout as sleep } from 'node:timers/promises';
import type { BrokerStanding, ClusterMetadata, ElectionOutcome } from '../client/admin.js';
import { ConnectionError } from '../client/connection.js';
import { KafkaError } from '../protocol/errors.js';
import { UsageError, intOption, parseArgs } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { MAX_INT32, connectAdmin, runAdminVerb, timeoutOption, type AdminAction } from './connect.js';
import { HEALTH_LISTED_PARTITIONS, UNHEALTHY_EXIT_CODE, clusterHealth, clusterText, healthText, type ClusterHealth } from './health.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import { membershipPlan } from './cluster_members.js';
import { table } from './io.js';
import type { CliIo } from './io.js';
import { renderOption } from './output.js';
import type { Render } from './output.js';
import { WATCH_HELP, WATCH_OPTION, watchInterval, watchUntilInterrupted } from './watch.js';
import type { Snapshot } from './watch.js';

const COMMON: readonly OptionSpec[] = [{ name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }];

export const CLUSTER_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  describe: COMMON,
  status: [...COMMON, WATCH_OPTION],
  health: [...COMMON, { name: 'wait-healthy', switch: true }, WATCH_OPTION],
  'elect-leaders': [...COMMON, { name: 'topic' }, { name: 'partition' }, { name: 'unclean', switch: true }],
  'remove-broker': [...COMMON, { name: 'force', switch: true }],
  'add-broker': [...COMMON, { name: 'no-move', switch: true }],
};

/** Pause between health polls under --wait-healthy. */
const HEALTH_POLL_MS = 250;
/** Bound of one poll's requests under --wait-healthy, so a stopped broker cannot use up the whole wait. */
const WAIT_ATTEMPT_TIMEOUT_MS = 5_000;

function electionText(results: readonly ElectionOutcome[]): string {
  if (results.length === 0) return '(no election needed)';
  return table([['TOPIC', 'PARTITION', 'RESULT', 'MESSAGE'], ...results.map((r) => [r.topic, String(r.partition), r.error, r.message ?? ''])]);
}

export interface BrokerStatus extends BrokerStanding {
  /** Replicas this broker hosts, how many of them are in their ISR, and how many it leads. */
  replicas: number;
  inSync: number;
  leads: number;
}

export interface ClusterStatus {
  clusterId: string | null;
  controllerId: number;
  brokers: BrokerStatus[];
}

/** Each broker's standing with what the topics' partitions place on it. */
export function clusterStatus(meta: ClusterMetadata, brokers: readonly BrokerStanding[]): ClusterStatus {
  const counts = new Map<number, { replicas: number; inSync: number; leads: number }>();
  const of = (id: number) => {
    let c = counts.get(id);
    if (c === undefined) counts.set(id, (c = { replicas: 0, inSync: 0, leads: 0 }));
    return c;
  };
  for (const t of meta.topics) {
    for (const p of t.partitionDetails) {
      for (const r of p.replicas) {
        const c = of(r);
        c.replicas++;
        if (p.isr.includes(r)) c.inSync++;
      }
      if (p.leader >= 0) of(p.leader).leads++;
    }
  }
  return {
    clusterId: meta.clusterId,
    controllerId: meta.controllerId,
    brokers: brokers.map((b) => ({ ...b, ...(counts.get(b.id) ?? { replicas: 0, inSync: 0, leads: 0 }) })),
  };
}

function statusText(s: ClusterStatus): string {
  const rows = s.brokers.map((b) => [
    String(b.id), `${b.host}:${b.port}`, b.rack ?? '-', b.state, String(b.replicas), String(b.inSync), String(b.leads),
  ]);
  return `cluster ${s.clusterId ?? '(unknown)'}, controller ${s.controllerId}\n` +
    table([['BROKER', 'ADDRESS', 'RACK', 'STATE', 'REPLICAS', 'IN-SYNC', 'LEADS'], ...rows]);
}

function noArguments(parsed: ParsedArgs, verb: string): void {
  if (parsed.positionals.length > 0) throw new UsageError(`cluster ${verb} takes no arguments`);
}

function plan(verb: string, parsed: ParsedArgs, out: Render): AdminAction {
  if (verb === 'remove-broker' || verb === 'add-broker') return membershipPlan(verb, parsed, out);
  noArguments(parsed, verb);
  if (verb === 'describe') {
    return async (admin) => {
      const meta = await admin.clusterMetadata();
      const { topics: _, ...cluster } = meta;
      return out(cluster, clusterText(meta));
    };
  }
  if (verb === 'status') {
    return async (admin) => {
      const status = clusterStatus(await admin.clusterMetadata(), await admin.describeBrokers());
      return out(status, statusText(status));
    };
  }
  const topic = parsed.options.get('topic')?.[0];
  const partition = intOption(parsed, 'partition', 0, MAX_INT32);
  if (partition !== undefined && topic === undefined) throw new UsageError('--partition needs --topic');
  const unclean = parsed.options.has('unclean');
  return async (admin) => {
    let partitions: { topic: string; partitions: number[] }[] | null = null;
    if (topic !== undefined) {
      const all = partition === undefined ? (await admin.describeTopic(topic)).partitionDetails.map((p) => p.partition) : [partition];
      partitions = [{ topic, partitions: all }];
    }
    const results = await admin.electLeaders(unclean ? 1 : 0, partitions);
    return out(results, electionText(results));
  };
}

async function readHealth(parsed: ParsedArgs, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ClusterHealth> {
  const admin = await connectAdmin(parsed, env, timeoutMs);
  try {
    return clusterHealth(await admin.clusterMetadata());
  } finally {
    await admin.close();
  }
}

/**
 * Polls until the cluster is healthy or `waitMs` has passed, reconnecting on every poll: in a
 * rolling restart the broker asked last time may be the one restarting. At the deadline the last
 * answer stands, even when a later poll failed; the last failure only when no poll was answered.
 */
async function waitHealthy(parsed: ParsedArgs, env: NodeJS.ProcessEnv, waitMs: number): Promise<ClusterHealth> {
  const deadline = Date.now() + waitMs;
  let last: ClusterHealth | undefined;
  let failure: unknown;
  for (;;) {
    try {
      last = await readHealth(parsed, env, Math.max(1, Math.min(WAIT_ATTEMPT_TIMEOUT_MS, deadline - Date.now())));
      if (last.healthy) return last;
    } catch (err) {
      if (!(err instanceof ConnectionError || err instanceof KafkaError)) throw err;
      failure = err;
    }
    if (Date.now() >= deadline) {
      if (last !== undefined) return last;
      throw failure;
    }
    await sleep(Math.min(HEALTH_POLL_MS, deadline - Date.now()));
  }
}

/** `cluster health`: prints the verdict and returns 0 when healthy, UNHEALTHY_EXIT_CODE otherwise. */
async function runHealth(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseArgs(argv, CLUSTER_VERBS['health'] ?? [], false);
  noArguments(parsed, 'health');
  const out = renderOption(parsed);
  const timeoutMs = timeoutOption(parsed);
  const intervalMs = watchInterval(parsed);
  if (intervalMs !== null && parsed.options.has('wait-healthy')) throw new UsageError('--watch and --wait-healthy do not go together');
  const snapshot = async (): Promise<Snapshot> => {
    const health = parsed.options.has('wait-healthy')
      ? await waitHealthy(parsed, io.env, timeoutMs)
      : await readHealth(parsed, io.env, timeoutMs);
    return { text: out(health, healthText(health)), exitCode: health.healthy ? 0 : UNHEALTHY_EXIT_CODE };
  };
  if (intervalMs !== null) return watchUntilInterrupted(intervalMs, snapshot, io);
  const { text, exitCode } = await snapshot();
  io.out(text);
  return exitCode;
}

/** Runs `cluster <verb> ...`; `argv` starts after the verb. Returns the exit code. */
export async function runCluster(verb: string, argv: readonly string[], io: CliIo): Promise<number> {
  if (verb === 'health') return runHealth(argv, io);
  return runAdminVerb('cluster', CLUSTER_VERBS, plan, verb, argv, io);
}

export const CLUSTER_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice cluster <describe|status|health|elect-leaders|remove-broker|add-broker> ...

  cluster describe        cluster id, controller and live brokers
  cluster status          every registered broker's state (running, warming, fenced) and its replicas
  cluster health          replication health; exit code ${UNHEALTHY_EXIT_CODE} while anything is under-replicated,
                          leaderless or offline
  cluster elect-leaders   move partition leaders back to their preferred replicas
  cluster remove-broker   unregister a drained broker (the last step of a decommission)
  cluster add-broker      wait for a new broker to join; with --no-move it takes new partitions only

Options for all of them:
${CLIENT_OPTIONS_HELP}

On failure the Kafka error name is printed and the exit code is 1.`,
  describe: `Usage: sluice cluster describe [options]

Prints the cluster id, the active controller and every live broker (id, host, port, rack), as the
broker asked sees them in Metadata.

Options:
${CLIENT_OPTIONS_HELP}`,
  status: `Usage: sluice cluster status [options]

Prints every registered broker with its state: running; warming (it joined a cluster that holds
topics and leads no partition another replica can lead until every replica it hosts is in sync and
it has read their newest data, --warm-up-bytes; its own /v1/health shows the progress); or fenced.
Beside it, the replicas it hosts, how many of those are in their ISR, and how many it leads.

Options:
${WATCH_HELP}
${CLIENT_OPTIONS_HELP}`,
  health: `Usage: sluice cluster health [--wait-healthy] [options]

Reads Metadata for every topic (internal ones included) and the live brokers from one broker, and
prints: the brokers up, the brokers named as replicas that are not live, the controller, how many
partitions there are, how many are under-replicated (ISR smaller than the replica set) or
leaderless, how many replicas are offline, the first ${HEALTH_LISTED_PARTITIONS} affected partitions, and the verdict.
The cluster is healthy when no partition is under-replicated or leaderless and no replica is
offline.

Exit codes: 0 healthy; ${UNHEALTHY_EXIT_CODE} unhealthy; 1 no broker reachable or a broker error;
2 bad usage.

Options:
  --wait-healthy                      poll until healthy, for at most --timeout-ms (each poll
                                      reconnects, so a restarting broker is skipped)
${WATCH_HELP}
${CLIENT_OPTIONS_HELP}`,
  'elect-leaders': `Usage: sluice cluster elect-leaders [options]

Runs on the active controller of a cluster (nodes started with --controller-voters).

Options:
  --topic T                           only the partitions of topic T [every partition]
  --partition P                       only partition P of --topic
  --unclean                           elect a leader for leaderless partitions, from outside the ISR if need be
${CLIENT_OPTIONS_HELP}`,
  'remove-broker': `Usage: sluice cluster remove-broker ID [--force] [options]

Unregisters broker ID (UnregisterBroker): it leaves Metadata, DescribeCluster and cluster status.
Refused (exit 1, POLICY_VIOLATION) while any partition still lists it as a replica: drain it first
with \`sluice reassign plan --remove ID\` and \`sluice reassign apply\`. If its process still runs it
stops heartbeating and never registers again by itself; restarting it joins as a new incarnation.

Options:
  --force                             unregister even though partitions still list it
${CLIENT_OPTIONS_HELP}`,
  'add-broker': `Usage: sluice cluster add-broker ID --no-move [options]

Waits (at most --timeout-ms) for broker ID, started with the cluster's --controller-voters, to be
registered and unfenced, and reports its state. No history moves: the controller places new topics
and new partitions of existing topics on the least-loaded brokers first, so the new broker takes
them before the others (RocketMQ's no-move expansion). To move history as well: sluice reassign plan.

Options:
  --no-move                           required: only new partitions go to the new broker
${CLIENT_OPTIONS_HELP}`,
};
