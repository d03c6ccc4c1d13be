// `sluice cluster elect-leaders` (main thread of the CLI process): asks the cluster, through any
// broker's client listener, for a preferred (or --unclean) leader election of one partition, a
// topic's partitions or every partition, and prints each partition's outcome as a table or JSON.

import type { ElectionOutcome } from '../client/admin.js';
import { UsageError, intOption } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { MAX_INT32, runAdminVerb, type AdminAction } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import { table } from './io.js';
import type { CliIo } from './io.js';

export const CLUSTER_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  'elect-leaders': [{ name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }, { name: 'topic' }, { name: 'partition' }, { name: 'unclean', switch: true }],
};

function electionText(results: readonly ElectionOutcome[]): string {
  if (results.length === 0) return '(no election needed)';
  return table([['TOPIC', 'PARTITION', 'RESULT', 'MESSAGE'], ...results.map((r) => [r.topic, String(r.partition), r.error, r.message ?? ''])]);
}

function plan(verb: string, parsed: ParsedArgs, json: boolean): AdminAction {
  if (verb !== 'elect-leaders') throw new UsageError(`unknown cluster command "${verb}"`);
  if (parsed.positionals.length > 0) throw new UsageError('cluster elect-leaders takes no arguments');
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
    return json ? JSON.stringify(results, null, 2) : electionText(results);
  };
}

/** Runs `cluster <verb> ...`; `argv` starts after the verb. */
export function runCluster(verb: string, argv: readonly string[], io: CliIo): Promise<void> {
  return runAdminVerb('cluster', CLUSTER_VERBS, plan, verb, argv, io);
}

export const CLUSTER_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice cluster elect-leaders [--topic T [--partition P]] [--unclean]

  cluster elect-leaders   move partition leaders back to their preferred replicas

On failure the Kafka error name is printed and the exit code is 1.`,
  'elect-leaders': `Usage: sluice cluster elect-leaders [options]

Runs on the active controller of a cluster (nodes started with --controller-voters).

Options:
  --topic T                           only the partitions of topic T [every partition]
  --partition P                       only partition P of --topic
  --unclean                           elect a leader for leaderless partitions, from outside the ISR if need be
${CLIENT_OPTIONS_HELP}`,
};
