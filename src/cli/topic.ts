// `sluice topic create|list|describe|alter-config|delete|reassign|reassignments` (main thread of the CLI
// process): parses the verb's arguments, runs it through the admin client against --brokers
// (default: the resolved kafka-addr) and prints it in the --format asked, with each partition's
// replication status (under-replicated, leaderless) judged in health.ts. `reassign` drives one
// partition's KIP-455 move (or cancels it) by hand, `reassignments` lists what is moving.
// Failures propagate to main, which maps them to exit codes.

import type { OngoingReassignment, TopicConfigEntry, TopicDescription, TopicSummary } from '../client/admin.js';
import { brokerError, missingFrom } from '../client/broker_errors.js';
import { UsageError, intOption } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { MAX_INT32, runAdminVerb, type AdminAction } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import { affectedPartitions, affectedText, partitionRows } from './health.js';
import { table } from './io.js';
import type { CliIo } from './io.js';
import type { Render } from './output.js';
import { WATCH_HELP, WATCH_OPTION } from './watch.js';

const COMMON: readonly OptionSpec[] = [{ name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }];

export const TOPIC_VERBS: Readonly<Record<string, readonly OptionSpec[]>> = {
  create: [...COMMON, { name: 'partitions' }, { name: 'replication-factor' }, { name: 'config', repeatable: true }],
  list: COMMON,
  describe: [...COMMON, { name: 'under-replicated', switch: true }, { name: 'unavailable', switch: true }, { name: 'configs', switch: true }, WATCH_OPTION],
  'alter-config': [...COMMON, { name: 'set', repeatable: true }, { name: 'delete', repeatable: true }],
  delete: COMMON,
  reassign: [...COMMON, { name: 'partition' }, { name: 'replicas' }, { name: 'cancel', switch: true }],
  reassignments: COMMON,
};

/** Bound on the broker ids of one --replicas list (a replica list's bound in the metadata log). */
const MAX_TARGET_REPLICAS = 1024;

function brokerIds(list: string): number[] {
  const ids = list.split(',').map((s) => s.trim());
  if (ids.length > MAX_TARGET_REPLICAS) throw new UsageError(`--replicas names at most ${MAX_TARGET_REPLICAS} brokers`);
  return ids.map((s) => {
    const id = Number(s);
    if (!/^\d+$/.test(s) || id > MAX_INT32) throw new UsageError(`--replicas expects broker ids like 1,2,4, got "${list}"`);
    return id;
  });
}

function reassignmentsText(list: readonly OngoingReassignment[]): string {
  if (list.length === 0) return '(no reassignments in progress)';
  return table([
    ['TOPIC', 'PARTITION', 'REPLICAS', 'ADDING', 'REMOVING'],
    ...list.map((r) => [r.topic, String(r.partition), r.replicas.join(','), r.addingReplicas.join(',') || '-', r.removingReplicas.join(',') || '-']),
  ]);
}


/** Bound on the keys one alter-config changes (the broker's bound on a request's resources' configs). */
const MAX_CONFIG_CHANGES = 1000;

/** The key=value pairs of a repeatable option (--config, --set). */
function keyValues(parsed: ParsedArgs, option: string): Record<string, string> {
  const configs: Record<string, string> = {};
  for (const kv of parsed.options.get(option) ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--${option} expects key=value, got "${kv}"`);
    configs[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return configs;
}

function oneName(parsed: ParsedArgs, verb: string): string {
  const [name, ...rest] = parsed.positionals;
  if (name === undefined || rest.length > 0) throw new UsageError(`topic ${verb} takes exactly one topic name`);
  return name;
}

/** Wide adds each topic's id. */
function listText(topics: readonly TopicSummary[], wide: boolean): string {
  if (topics.length === 0) return '(no topics)';
  return table([
    ['NAME', 'PARTITIONS', 'REPLICAS', 'UNDER-REPLICATED', 'LEADERLESS', 'INTERNAL', ...(wide ? ['TOPIC-ID'] : [])],
    ...topics.map((t) => [
      t.name, String(t.partitions), String(t.replicationFactor), String(t.underReplicated), String(t.leaderless), t.internal ? 'yes' : 'no',
      ...(wide ? [t.topicId] : []),
    ]),
  ]);
}

const NO_DESCRIBE_CONFIGS = '(broker does not describe configs)';

/** A topic config as describe --configs prints it: DEFAULT says whether it is the broker's default. */
export interface ConfigView extends TopicConfigEntry {
  isDefault: boolean;
}

function configViews(configs: readonly TopicConfigEntry[]): ConfigView[] {
  return configs.map((c) => ({ ...c, isDefault: c.source === 'DEFAULT_CONFIG' }));
}

/** Wide adds whether each is read-only. */
function configsText(configs: readonly TopicConfigEntry[], wide: boolean): string {
  return table([
    ['CONFIG', 'VALUE', 'SOURCE', 'DEFAULT', ...(wide ? ['READ-ONLY'] : [])],
    ...configViews(configs).map((c) => [
      c.name, c.sensitive ? '(sensitive)' : (c.value ?? '(null)'), c.source, c.isDefault ? 'yes' : 'no', ...(wide ? [c.readOnly ? 'yes' : 'no'] : []),
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
  const configs = t.configs === null ? NO_DESCRIBE_CONFIGS : configsText(t.configs, false);
  return `${summary}\n\n${partitions}\n\n${configs}`;
}

/** Checks the verb's arguments and returns what to do once connected. */
function plan(verb: string, parsed: ParsedArgs, out: Render): AdminAction {
  switch (verb) {
    case 'create': {
      const name = oneName(parsed, verb);
      // -1 asks the broker for its num-partitions / default-replication-factor.
      const partitions = intOption(parsed, 'partitions', 1, MAX_INT32) ?? -1;
      const rf = intOption(parsed, 'replication-factor', 1, 32767) ?? -1;
      const configs = keyValues(parsed, 'config');
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
        return out(topics, (wide) => listText(topics, wide));
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
      if (parsed.options.has('configs')) {
        return async (admin) => {
          const configs = (await admin.describeTopic(name)).configs;
          return out(configs === null ? null : configViews(configs), (wide) => (configs === null ? NO_DESCRIBE_CONFIGS : configsText(configs, wide)));
        };
      }
      return async (admin) => {
        const t = await admin.describeTopic(name);
        return out(t, describeText(t));
      };
    }
    case 'alter-config': {
      const name = oneName(parsed, verb);
      const set = keyValues(parsed, 'set');
      const deleted = [...new Set(parsed.options.get('delete') ?? [])];
      if (deleted.includes('')) throw new UsageError('--delete takes a config name');
      const changes = [
        ...Object.entries(set).map(([key, value]) => ({ type: 'topic' as const, name, key, value })),
        ...deleted.map((key) => ({ type: 'topic' as const, name, key, value: null })),
      ];
      if (changes.length === 0) throw new UsageError('topic alter-config needs --set key=value or --delete key');
      if (changes.length > MAX_CONFIG_CHANGES) throw new UsageError(`topic alter-config changes at most ${MAX_CONFIG_CHANGES} keys at once`);
      return async (admin) => {
        const [result] = await admin.incrementalAlterConfigs(changes);
        if (result === undefined) throw missingFrom('IncrementalAlterConfigs', `alter configs of ${name}`);
        if (result.errorCode !== 0) throw brokerError(result.errorCode, `alter configs of ${name}`, result.message);
        const lines = [...Object.entries(set).map(([k, v]) => `set ${k}=${v}`), ...deleted.map((k) => `deleted ${k} (back to its default)`)];
        return out({ topic: name, set, deleted }, `topic ${name}: ${lines.join(', ')}`);
      };
    }
    case 'reassign': {
      const topic = oneName(parsed, verb);
      const partition = intOption(parsed, 'partition', 0, MAX_INT32);
      if (partition === undefined) throw new UsageError('topic reassign needs --partition P');
      const cancel = parsed.options.has('cancel');
      const list = parsed.options.get('replicas')?.[0];
      if (cancel === (list !== undefined)) throw new UsageError('topic reassign takes either --replicas 1,2,4 or --cancel');
      const replicas = list === undefined ? null : brokerIds(list);
      return async (admin) => {
        const [result] = await admin.alterPartitionReassignments([{ topic, partition, replicas }]);
        if (result === undefined) throw missingFrom('AlterPartitionReassignments', `reassign ${topic}-${partition}`);
        if (result.errorCode !== 0) throw brokerError(result.errorCode, `reassign ${topic}-${partition}`, result.message);
        return out(result, replicas === null ? `cancelled the reassignment of ${topic}-${partition}` : `reassigning ${topic}-${partition} to ${replicas.join(',')}`);
      };
    }
    case 'reassignments': {
      if (parsed.positionals.length > 1) throw new UsageError('topic reassignments takes at most one topic name');
      const only = parsed.positionals[0];
      return async (admin) => {
        const all = await admin.listPartitionReassignments();
        const list = only === undefined ? all : all.filter((r) => r.topic === only);
        return out(list, reassignmentsText(list));
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
export function runTopic(verb: string, argv: readonly string[], io: CliIo): Promise<number> {
  return runAdminVerb('topic', TOPIC_VERBS, plan, verb, argv, io);
}

export const TOPIC_HELP: Readonly<Record<string, string>> = {
  '': `Usage: sluice topic <create|list|describe|alter-config|delete|reassign|reassignments> ...

  topic create NAME [--partitions N] [--replication-factor N] [--config key=value ...]
  topic list
  topic describe NAME
  topic describe [NAME] --under-replicated|--unavailable
  topic describe NAME --configs
  topic alter-config NAME [--set key=value ...] [--delete key ...]
  topic delete NAME
  topic reassign NAME --partition P --replicas 1,2,4 | --cancel
  topic reassignments [NAME]

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
  --configs                           only the configs: value, source and whether it is the
                                      default (wide: and whether it is read-only)
${WATCH_HELP}
${CLIENT_OPTIONS_HELP}`,
  'alter-config': `Usage: sluice topic alter-config NAME [--set key=value ...] [--delete key ...] [options]

Changes topic configs in one IncrementalAlterConfigs request: --set overrides a key, --delete
removes the override so the broker's default applies again. A refused key (unknown, bad value)
fails the whole change with its Kafka error (e.g. INVALID_CONFIG) and exit code 1.

Options:
  --set key=value                     set a config (repeatable), e.g. --set retention.ms=3600000
  --delete key                        remove an override (repeatable)
${CLIENT_OPTIONS_HELP}`,
  delete: `Usage: sluice topic delete NAME [options]\n\nOptions:\n${CLIENT_OPTIONS_HELP}`,
  reassign: `Usage: sluice topic reassign NAME --partition P --replicas 1,2,4 [options]
       sluice topic reassign NAME --partition P --cancel [options]

Moves one partition to the given replicas, preferred leader first (AlterPartitionReassignments,
KIP-455): the new replicas are added and catch up, then the others are dropped. A new target
replaces a move under way; --cancel returns the partition to its original replicas.

Options:
  --partition P                       the partition to move
  --replicas LIST                     the target broker ids, comma-separated
  --cancel                            cancel the partition's move instead
${CLIENT_OPTIONS_HELP}`,
  reassignments: `Usage: sluice topic reassignments [NAME] [options]

Lists the partitions being reassigned (of every topic, or of NAME): the replica list, the replicas
being added and those being removed.

Options:
${CLIENT_OPTIONS_HELP}`,
};
