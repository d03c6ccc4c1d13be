// `sluice produce TOPIC` (main thread of the CLI process): records from --value, or one per stdin
// line, through our producer (idempotent with acks all, as Kafka 3+ clients default). A line is
// the value, or KEY<sep>VALUE with --key-separator, or with --format json an object
// {key, value, headers, partition}. Prints where each record landed, in input order. The records
// in flight are bounded; a file on stdin gives the progress bar its size.
import { fstatSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Producer } from '../client/producer/index.js';
import type { Acks, ProducerMessage, RecordMetadata } from '../client/producer/index.js';
import { UsageError, intOption, optionValue, parseArgs } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { MAX_INT32, bootstrapServers, timeoutOption } from './connect.js';
import { CLIENT_OPTIONS_HELP } from './help.js';
import type { CliIo } from './io.js';
import { formatOption, streamItem } from './output.js';
import type { OutputFormat } from './output.js';
import { progressBar } from './progress.js';

export const PRODUCE_OPTIONS: readonly OptionSpec[] = [
  { name: 'brokers' }, { name: 'format' }, { name: 'timeout-ms' }, { name: 'value' }, { name: 'key' },
  { name: 'header', repeatable: true }, { name: 'partition' }, { name: 'acks' }, { name: 'key-separator' },
];

/** Records sent but not yet printed: past this, reading waits for the oldest acknowledgement. */
const MAX_IN_FLIGHT = 10_000;
/** Bound on one stdin line (the broker's default max message size is about 1 MiB). */
const MAX_LINE_CHARS = 16 * 1024 * 1024;
/** Bound on --header and on the headers of one JSON line. */
const MAX_HEADERS = 1024;

export interface ProduceDefaults {
  readonly key: string | null;
  readonly headers: readonly { key: string; value: string }[];
  readonly partition: number | undefined;
  readonly keySeparator: string | null;
}

function acksOption(parsed: ParsedArgs): Acks {
  const raw = optionValue(parsed, 'acks') ?? 'all';
  if (raw === 'all' || raw === '-1') return 'all';
  if (raw === '0' || raw === '1') return Number(raw) as 0 | 1;
  throw new UsageError(`--acks must be 0, 1 or all, got "${raw}"`);
}

function headerOptions(parsed: ParsedArgs): { key: string; value: string }[] {
  const raw = parsed.options.get('header') ?? [];
  if (raw.length > MAX_HEADERS) throw new UsageError(`at most ${MAX_HEADERS} --header options`);
  return raw.map((kv) => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--header expects key=value, got "${kv}"`);
    return { key: kv.slice(0, eq), value: kv.slice(eq + 1) };
  });
}

function stringOrNull(v: unknown, what: string, line: number): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new UsageError(`line ${line}: "${what}" must be a string or null`);
  return v;
}

/** One JSON input line: {value, key?, headers?: {k: v} | [{key, value}], partition?}. */
function jsonMessage(text: string, line: number, d: ProduceDefaults): ProducerMessage {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`line ${line}: not JSON (${(err as Error).message})`);
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new UsageError(`line ${line}: expected an object {"key", "value", "headers", "partition"}`);
  const r = o as Record<string, unknown>;
  const headers: { key: string; value: string | null }[] = [...d.headers];
  const h = r['headers'];
  if (h !== undefined && h !== null) {
    if (typeof h !== 'object') throw new UsageError(`line ${line}: "headers" must be an object or a list of {key, value}`);
    const pairs = Array.isArray(h) ? (h as unknown[]).map((x) => x as Record<string, unknown>).map((x) => [x?.['key'], x?.['value']]) : Object.entries(h);
    for (const [k, v] of pairs) {
      if (typeof k !== 'string') throw new UsageError(`line ${line}: a header key must be a string`);
      headers.push({ key: k, value: stringOrNull(v, `headers.${k}`, line) });
    }
    if (headers.length > MAX_HEADERS) throw new UsageError(`line ${line}: at most ${MAX_HEADERS} headers`);
  }
  const p = r['partition'];
  if (p !== undefined && p !== null && !(Number.isSafeInteger(p) && (p as number) >= 0 && (p as number) <= MAX_INT32)) {
    throw new UsageError(`line ${line}: "partition" must be a partition number`);
  }
  const partition = typeof p === 'number' ? p : d.partition;
  const key = r['key'] === undefined ? d.key : stringOrNull(r['key'], 'key', line);
  return { key, value: stringOrNull(r['value'], 'value', line), headers, ...(partition === undefined ? {} : { partition }) };
}

/** The record one input line stands for (pure). */
export function lineMessage(text: string, line: number, json: boolean, d: ProduceDefaults): ProducerMessage {
  if (json) return jsonMessage(text, line, d);
  let key = d.key;
  let value = text;
  if (d.keySeparator !== null) {
    const at = text.indexOf(d.keySeparator);
    if (at < 0) throw new UsageError(`line ${line}: no key separator "${d.keySeparator}"`);
    key = text.slice(0, at);
    value = text.slice(at + d.keySeparator.length);
  }
  return { key, value, headers: d.headers, ...(d.partition === undefined ? {} : { partition: d.partition }) };
}

function ackText(format: OutputFormat, m: RecordMetadata): string {
  const ack = { topic: m.topic, partition: m.partition, offset: m.offset };
  return format === 'json' || format === 'yaml' ? streamItem(format, ack) : `${m.partition}@${m.offset}`;
}

/** The size of stdin when it is a regular file (for the progress bar), else null. */
function stdinSize(input: Readable): number | null {
  const fd = (input as Readable & { fd?: unknown }).fd;
  if (typeof fd !== 'number') return null;
  try {
    const st = fstatSync(fd);
    return st.isFile() ? st.size : null;
  } catch {
    return null;
  }
}

export async function runProduce(argv: readonly string[], io: CliIo, input: Readable = process.stdin): Promise<number> {
  const parsed = parseArgs(argv, PRODUCE_OPTIONS, false);
  const [topic, ...extra] = parsed.positionals;
  if (topic === undefined || topic === '' || extra.length > 0) throw new UsageError('produce takes exactly one topic name');
  const format = formatOption(parsed);
  const acks = acksOption(parsed);
  const defaults: ProduceDefaults = {
    key: optionValue(parsed, 'key') ?? null,
    headers: headerOptions(parsed),
    partition: intOption(parsed, 'partition', 0, MAX_INT32),
    keySeparator: optionValue(parsed, 'key-separator') ?? null,
  };
  if (defaults.keySeparator === '') throw new UsageError('--key-separator must not be empty');
  const single = optionValue(parsed, 'value');
  if (single !== undefined && (format === 'json' || defaults.keySeparator !== null)) throw new UsageError('--value does not go with --format json or --key-separator (they read stdin)');
  const timeoutMs = timeoutOption(parsed);
  const producer = new Producer({
    brokers: bootstrapServers(parsed, io.env), clientId: 'sluice-cli', acks, requestTimeoutMs: timeoutMs,
    maxBlockMs: timeoutMs, deliveryTimeoutMs: Math.max(timeoutMs, 5_000),
  });
  await producer.connect();
  const pending: Promise<RecordMetadata>[] = [];
  const printOldest = async (): Promise<void> => io.out(ackText(format, await (pending.shift() as Promise<RecordMetadata>)));
  try {
    if (single !== undefined) {
      pending.push(producer.send(topic, { key: defaults.key, value: single, headers: defaults.headers, ...(defaults.partition === undefined ? {} : { partition: defaults.partition }) }));
    } else {
      const size = stdinSize(input);
      const bar = progressBar(io, `produce ${topic}`, size === null ? 'records' : 'bytes');
      bar.start(size, 0);
      let line = 0;
      let bytes = 0;
      const lines = createInterface({ input, crlfDelay: Infinity });
      try {
        for await (const text of lines) {
          line++;
          bytes += Buffer.byteLength(text) + 1;
          if (text.length > MAX_LINE_CHARS) throw new UsageError(`line ${line} is longer than ${MAX_LINE_CHARS} characters`);
          if (format === 'json' && text.trim() === '') continue;
          pending.push(producer.send(topic, lineMessage(text, line, format === 'json', defaults)));
          if (pending.length > MAX_IN_FLIGHT) await printOldest();
          bar.update(size === null ? line : bytes);
        }
      } finally {
        bar.stop();
        lines.close();
      }
    }
    while (pending.length > 0) await printOldest();
  } finally {
    // Whatever failed, the sends still pending must not reject unobserved.
    for (const p of pending) p.catch(() => undefined);
    await producer.close();
  }
  return 0;
}

export const PRODUCE_HELP = `Usage: sluice produce TOPIC [options] < lines
       sluice produce TOPIC --value V [options]

Produces one record per line of standard input (or the one --value) through an idempotent
producer (acks all unless --acks says otherwise) and prints where each landed, in input order:
PARTITION@OFFSET, or with --format json one {"topic", "partition", "offset"} per line.
On a terminal a progress bar with rate (and ETA when stdin is a file) is drawn on stderr.

Options:
  --value V                           produce one record with this value instead of reading stdin
  --key K                             key of every record [none]
  --key-separator SEP                 split each line at the first SEP into KEY and VALUE
  --header k=v                        a header on every record (repeatable)
  --partition P                       produce to partition P [by key hash; sticky without a key]
  --acks 0|1|all                      replicas that must have a record before it counts [all];
                                      0 and 1 turn idempotence off
  --format json                       read one JSON object per line, {"key": "k", "value": "v",
                                      "headers": {"h": "x"}, "partition": 0}, and print JSON
${CLIENT_OPTIONS_HELP}`;
