// `sluice consume TOPIC[,TOPIC]` (main thread of the CLI process): reads records through our
// consumer — by assignment from the --offset grammar (offset_spec.ts), or as a member of --group,
// committing what it printed — until --num records, until the end offsets captured at start
// (--until-end), or Ctrl-C. Prints values (text), more columns (wide), or one object per record
// (json, yaml) with key, value and headers as UTF-8 text, or base64 when any is not valid UTF-8.
import { isUtf8 } from 'node:buffer';
import { KafkaAdmin } from '../client/admin.js';
import { Consumer } from '../client/consumer/consumer.js';
import { tpKey } from '../client/consumer/topic_partitions.js';
import type { ConsumerMessage, TopicPartition } from '../client/consumer/types.js';
import { UsageError, intOption, optionValue, parseArgs } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { MAX_INT32, bootstrapServers, connectAdmin, timeoutOption } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import type { CliIo } from './io.js';
import { formatOption, streamItem } from './output.js';
import type { OutputFormat } from './output.js';
import { OFFSET_GRAMMAR_HELP, parseOffsetSpec, startOffset } from './offset_spec.js';
import type { OffsetSpec } from './offset_spec.js';
import { progressBar } from './progress.js';

export const CONSUME_OPTIONS: readonly OptionSpec[] = [
  { name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }, { name: 'offset' }, { name: 'partitions' },
  { name: 'group' }, { name: 'num' }, { name: 'until-end', switch: true },
];

/** Bound on the topics of one invocation. */
const MAX_TOPICS = 1000;

/** A consumed record as json and yaml print it (field names are stable). */
export interface RecordView {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  /** How key, value and header values are written: 'utf8' text, or 'base64' when any is not valid UTF-8. */
  encoding: 'utf8' | 'base64';
  key: string | null;
  value: string | null;
  headers: { key: string; value: string | null }[];
}

export function recordView(m: ConsumerMessage): RecordView {
  const bytes = [m.key, m.value, ...m.headers.map((h) => h.value)];
  const encoding = bytes.every((b) => b === null || isUtf8(b)) ? 'utf8' : 'base64';
  const text = (b: Buffer | null): string | null => (b === null ? null : b.toString(encoding));
  return {
    topic: m.topic, partition: m.partition, offset: m.offset, timestamp: m.timestamp, encoding,
    key: text(m.key), value: text(m.value), headers: m.headers.map((h) => ({ key: h.key, value: text(h.value) })),
  };
}

function recordText(format: OutputFormat, m: ConsumerMessage): string {
  if (format === 'json' || format === 'yaml') return streamItem(format, recordView(m));
  const value = m.value?.toString('utf8') ?? '';
  if (format === 'text') return value;
  const headers = m.headers.map((h) => `${h.key}=${h.value?.toString('utf8') ?? ''}`).join(',');
  return [`${m.topic}/${m.partition}@${m.offset}`, new Date(m.timestamp).toISOString(), m.key?.toString('utf8') ?? '-', headers || '-', value].join('\t');
}

interface ConsumePlan {
  topics: string[];
  partitionFilter: number[] | null;
  spec: OffsetSpec;
  group: string | undefined;
  num: number | undefined;
  untilEnd: boolean;
  format: OutputFormat;
}

function consumePlan(parsed: ParsedArgs): ConsumePlan {
  const [list, ...extra] = parsed.positionals;
  if (list === undefined || extra.length > 0) throw new UsageError('consume takes one argument: TOPIC or TOPIC,TOPIC,...');
  const topics = [...new Set(list.split(',').map((t) => t.trim()))];
  if (topics.includes('')) throw new UsageError(`consume: an empty topic name in "${list}"`);
  if (topics.length > MAX_TOPICS) throw new UsageError(`consume takes at most ${MAX_TOPICS} topics`);
  const rawPartitions = optionValue(parsed, 'partitions');
  const partitionFilter = rawPartitions === undefined ? null : rawPartitions.split(',').map((p) => {
    if (!/^\d+$/.test(p.trim()) || Number(p) > MAX_INT32) throw new UsageError(`--partitions expects partition numbers like 0,1, got "${rawPartitions}"`);
    return Number(p);
  });
  const group = optionValue(parsed, 'group');
  if (group === '') throw new UsageError('--group must not be empty');
  const spec = parseOffsetSpec(optionValue(parsed, 'offset') ?? 'start', Date.now());
  if (group !== undefined) {
    if (partitionFilter !== null) throw new UsageError('--partitions does not go with --group: the group assigns partitions');
    if (spec.kind !== 'earliest' && spec.kind !== 'latest') {
      throw new UsageError('with --group, --offset is start or end (where the group has no committed offset yet); move a group with `sluice group seek`');
    }
  }
  return {
    topics, partitionFilter, spec, group, num: intOption(parsed, 'num', 1, Number.MAX_SAFE_INTEGER),
    untilEnd: parsed.options.has('until-end'), format: formatOption(parsed),
  };
}

interface Scope {
  partitions: TopicPartition[];
  /** Where each partition starts (null with a group: its committed offset, else the reset). */
  starts: Map<string, number>;
  /** The log end offsets when consuming began. */
  ends: Map<string, number>;
}

/** The partitions to read, where each starts and where it ended when we began. */
async function readScope(admin: KafkaAdmin, plan: ConsumePlan): Promise<Scope> {
  const partitions: TopicPartition[] = [];
  for (const topic of plan.topics) {
    const all = (await admin.describeTopic(topic)).partitionDetails.map((p) => p.partition);
    for (const p of plan.partitionFilter ?? all) {
      if (!all.includes(p)) throw new UsageError(`topic "${topic}" has no partition ${p} (it has ${all.length})`);
      partitions.push({ topic, partition: p });
    }
  }
  const spec = plan.spec;
  const [earliest, latest, atTimestamp, committed] = await Promise.all([
    admin.listOffsets(partitions, 'earliest'),
    admin.listOffsets(partitions, 'latest'),
    spec.kind === 'timestamp' ? admin.listOffsets(partitions, { timestamp: spec.timestamp }) : null,
    plan.group === undefined ? null : admin.fetchGroupOffsets(plan.group),
  ]);
  const starts = new Map<string, number>();
  const ends = new Map<string, number>();
  partitions.forEach((p, i) => {
    const bounds = { earliest: earliest[i]?.offset ?? 0, latest: latest[i]?.offset ?? 0, atTimestamp: atTimestamp?.[i]?.offset ?? -1 };
    const key = tpKey(p.topic, p.partition);
    const mine = committed?.find((c) => c.topic === p.topic && c.partition === p.partition && c.offset >= 0);
    starts.set(key, mine?.offset ?? startOffset(spec, bounds));
    ends.set(key, bounds.latest);
  });
  return { partitions, starts, ends };
}

export async function runConsume(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseArgs(argv, CONSUME_OPTIONS, false);
  const plan = consumePlan(parsed);
  const admin = await connectAdmin(parsed, io.env);
  let scope: Scope;
  try {
    scope = await readScope(admin, plan);
  } finally {
    await admin.close();
  }
  const timeoutMs = timeoutOption(parsed);
  const consumer = new Consumer({
    brokers: bootstrapServers(parsed, io.env), clientId: 'sluice-cli', requestTimeoutMs: timeoutMs,
    ...(plan.group === undefined ? {} : { groupId: plan.group, autoOffsetReset: plan.spec.kind === 'latest' ? 'latest' as const : 'earliest' as const }),
  });
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Under --until-end: the next offset each partition must reach; done when all have.
  const position = new Map(scope.starts);
  const remaining = (): number => [...scope.ends].reduce((sum, [k, end]) => sum + Math.max(0, end - (position.get(k) ?? 0)), 0);
  const bar = progressBar(io, `consume ${plan.topics.join(',')}`, 'records');
  const total = plan.untilEnd ? remaining() : null;
  let printed = 0;
  const finished = (): boolean => (plan.num !== undefined && printed >= plan.num) || (plan.untilEnd && remaining() === 0);
  try {
    if (plan.group === undefined) await consumer.assign(scope.partitions.map((p) => ({ ...p, offset: scope.starts.get(tpKey(p.topic, p.partition)) ?? 0 })));
    else await consumer.subscribe(plan.topics);
    bar.start(plan.num ?? total, 0);
    while (!finished() && !abort.signal.aborted) {
      const batches = await consumer.poll({ signal: abort.signal });
      const commits: { topic: string; partition: number; offset: number }[] = [];
      for (const b of batches) {
        const key = tpKey(b.topic, b.partition);
        const end = plan.untilEnd ? scope.ends.get(key) ?? Infinity : Infinity;
        let next: number | null = null;
        for (const m of b.messages) {
          if (m.offset >= end || finished()) break;
          io.out(recordText(plan.format, m));
          printed++;
          next = m.offset + 1;
        }
        if (next !== null) {
          position.set(key, next);
          commits.push({ topic: b.topic, partition: b.partition, offset: next });
        }
      }
      if (plan.group !== undefined && commits.length > 0) await consumer.commit(commits);
      bar.update(printed);
    }
  } finally {
    bar.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await consumer.close();
  }
  return 0;
}

export const CONSUME_HELP = `Usage: sluice consume TOPIC[,TOPIC...] [options]

Reads records and prints them: their values (text), TOPIC/PARTITION@OFFSET, time, key, headers and
value tab-separated (wide), or one object per record (json: one line each; yaml: one document
each) {"topic", "partition", "offset", "timestamp", "encoding", "key", "value",
"headers": [{"key", "value"}]}, where key, value and header values are UTF-8 text, or base64 when
any of them is not valid UTF-8 ("encoding": "utf8" or "base64"). Runs until Ctrl-C, --num records
or --until-end. With --until-end on a terminal, a progress bar with rate and ETA is drawn on stderr.

--offset (where each partition starts; default start):
${OFFSET_GRAMMAR_HELP}

Options:
  --offset SPEC                       where to start, as above [start]
  --partitions 0,1                    only these partitions [all]
  --group G                           consume as a member of group G and commit what was printed;
                                      it starts at the group's committed offsets, and --offset
                                      (start or end) applies only where it has none
  --num N                             stop after N records
  --until-end                         stop at the log end offsets read when consuming began
${CLIENT_OPTIONS_HELP}`;
