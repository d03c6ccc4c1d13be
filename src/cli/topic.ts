// `sluice topic create|list|describe|delete` (main thread of the CLI process): parses the verb's
// arguments, runs it through the admin client against --brokers (default: the resolved
// kafka-addr) and prints text tables or JSON, with each partition's replication status (under-
// replicated, leaderless) judged in health.ts. Failures propagate to main, which maps them to
// exit codes.

import type { TopicDescription, TopicSummary } from '../client/admin.js';
import { UsageError, intOption } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { MAX_INT32, runAdminVerb, type AdminAction } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import { affectedPartitions, affectedText, partitionRows } from './health.js';
import { table } from './io.js';
import type { CliIo } from './io.js';

const COMMON: readonly OptionSpec[] = [{ name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }];

export const TOPIC_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  create: [...COMMON, { name: 'partitions' }, { name: 'replication-factor' }, { name: 'config', repeatable: true }],
  list: COMMON,
  describe: [...COMMON, { name: 'under-replicated', switch: true }, { name: 'unavailable', switch: true }],
  delete: COMMON,
};


function topicConfigs(parsed: ParsedArgs): Record<string, string> {
  const configs: Record<string, string> = {};
  for (const kv of parsed.options.get('config') ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--config expects key=value, got "${kv}"`);
    configs[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return configs;
}

function oneName(parsed: ParsedArgs, verb: string): string {
  const [name, ...rest] = parsed.positionals;
  if (name === undefined || rest.length > 0) throw new UsageError(`topic ${verb} takes exactly one topic name`);
  return name;
}

function listText(topics: readonly TopicSummary[]): string {
  if (topics.length === 0) return '(no topics)';
  return table([
    ['NAME', 'PARTITIONS', 'REPLICAS', 'UNDER-REPLICATED', 'LEADERLESS', 'INTERNAL'],
    ...topics.map((t) => [
      t.name, String(t.partitions), String(t.replicationFactor), String(t.underReplicated), String(t.leaderless), t.internal ? 'yes' : 'no',
    ]),
  ]);
}

function describeText(t: TopicDescription): string {
  const summary = table([
    ['name', t.name], ['topic id', t.topicId], ['internal', String(t.internal)],
    ['partitions', String(t.partitions)], ['replication', String(t.replicationFactor)],
    ['under-replicated', `${t.underReplicated} of ${t.partitions}`], ['leaderless', String(t.leaderless)],
  ]);
  const partitions = partitionRows(t.partitionDetails.map((p) => ({ p })));
  const configs = t.configs === null
    ? '(broker does not describe configs)'
    : table([
      ['CONFIG', 'VALUE', 'SOURCE'],
      ...t.configs.map((c) => [c.name, c.sensitive ? '(sensitive)' : (c.value ?? '(null)'), c.source]),
    ]);
  return `${summary}\n\n${partitions}\n\n${configs}`;
}

/** Checks the verb's arguments and returns what to do once connected. */
function plan(verb: string, parsed: ParsedArgs, json: boolean): AdminAction {
  const out = (value: unknown, text: string): string => (json ? JSON.stringify(value, null, 2) : text);
  switch (verb) {
    case 'create': {
      const name = oneName(parsed, verb);
      // -1 asks the broker for its num-partitions / default-replication-factor.
      const partitions = intOption(parsed, 'partitions', 1, MAX_INT32) ?? -1;
      const rf = intOption(parsed, 'replication-factor', 1, 32767) ?? -1;
      const configs = topicConfigs(parsed);
      return async (admin) => {
        const created = await admin.createTopics(name, partitions, rf, configs);
        const shape = created.partitions < 0
          ? ''
          : ` (${created.partitions} partitions, replication factor ${created.replicationFactor})`;
        return out(created, `created topic ${name}${shape}`);
      };
    }
    case 'list': {
      if (parsed.positionals.length > 0) throw new UsageError('topic list takes no arguments');
      return async (admin) => {
        const topics = await admin.listTopics();
        return out(topics, listText(topics));
      };
    }
    case 'describe': {
      const filter = { underReplicated: parsed.options.has('under-replicated'), unavailable: parsed.options.has('unavailable') };
      if (filter.underReplicated || filter.unavailable) {
        // kafka-topics.sh --describe --under-replicated-partitions / --unavailable-partitions: every topic, or the one named.
        if (parsed.positionals.length > 1) throw new UsageError('topic describe takes at most one topic name');
        const only = parsed.positionals[0];
        return async (admin) => {
          const topics = only === undefined ? (await admin.clusterMetadata()).topics : [await admin.describeTopic(only)];
          const list = affectedPartitions(topics, filter);
          return out(list, affectedText(list));
        };
      }
      const name = oneName(parsed, verb);
      return async (admin) => {
        const t = await admin.describeTopic(name);
        return out(t, describeText(t));
      };
    }
    default: {
      const name = oneName(parsed, verb);
      return async (admin) => {
        await admin.deleteTopics([name]);
        return out({ deleted: name }, `deleted topic ${name}`);
      };
    }
  }
}

/** Runs `topic <verb> ...`; `argv` starts after the verb. */
export function runTopic(verb: string, argv: readonly string[], io: CliIo): Promise<void> {
  return runAdminVerb('topic', TOPIC_VERBS, plan, verb, argv, io);
}

export const TOPIC_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice topic <create|list|describe|delete> ...

  topic create NAME [--partitions N] [--replication-factor N] [--config key=value ...]
  topic list
  topic describe NAME
  topic describe [NAME] --under-replicated|--unavailable
  topic delete NAME

Options for all of them:
${CLIENT_OPTIONS_HELP}

On failure the Kafka error name is printed and the exit code is 1.`,
  create: `Usage: sluice topic create NAME [options]

Options:
  --partitions N                      partition count [the broker's num-partitions]
  --replication-factor N              replicas per partition [the broker's default-replication-factor]
  --config key=value                  topic config (repeatable), e.g. --config retention.ms=3600000
${CLIENT_OPTIONS_HELP}`,
  list: `Usage: sluice topic list [options]

Each topic's partition count, replication factor, and how many of its partitions are
under-replicated (ISR smaller than the replica set) or leaderless.

Options:
${CLIENT_OPTIONS_HELP}`,
  describe: `Usage: sluice topic describe NAME [options]
       sluice topic describe [NAME] --under-replicated|--unavailable [options]

Shows each partition's leader, leader epoch, replicas, in-sync replicas (ISR), replicas on brokers
that are not live (OFFLINE) and its status: ok, under-replicated (ISR smaller than the replica
set) or leaderless (no leader: neither produce nor fetch is served), then the topic's configs.
With --under-replicated or --unavailable, lists only the partitions so affected, of every topic
(internal ones included) or of NAME.

Options:
  --under-replicated                  only partitions whose ISR is smaller than their replica set
  --unavailable                       only partitions without a leader
${CLIENT_OPTIONS_HELP}`,
  delete: `Usage: sluice topic delete NAME [options]\n\nOptions:\n${CLIENT_OPTIONS_HELP}`,
};
