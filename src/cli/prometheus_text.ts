// A strict reader of the Prometheus text exposition format (version 0.0.4), as brokers' /metrics
// serve it, for the CLI's metric sampler (reassign_metrics.ts). Pure; CLI process.
// Strict: a line that is neither a comment, a blank nor a well-formed sample throws a KafkaError
// (INVALID_REQUEST) naming the line, so a truncated or foreign answer is refused rather than read
// as zeros. Bounded: at most MAX_SAMPLES samples and MAX_LABELS labels per sample.
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export const MAX_SAMPLES = 200_000;
const MAX_LABELS = 32;
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function bad(lineNo: number, why: string): never {
  throw new KafkaError(ErrorCode.INVALID_REQUEST, `metrics text line ${lineNo}: ${why}`);
}

function parseValue(text: string, lineNo: number): number {
  switch (text) {
    case '+Inf': return Infinity;
    case '-Inf': return -Infinity;
    case 'NaN': return NaN;
  }
  const v = Number(text);
  if (text === '' || Number.isNaN(v)) bad(lineNo, `value '${text}' is not a number`);
  return v;
}

/** Reads `{a="x",b="y"}` from `line` at `at` (just past '{'); returns the labels and the index past '}'. */
function parseLabels(line: string, at: number, lineNo: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let count = 0;
  let i = at;
  for (;;) {
    while (line[i] === ' ') i++;
    if (line[i] === '}') return { labels, end: i + 1 };
    const eq = line.indexOf('=', i);
    if (eq < 0) bad(lineNo, 'label without a value');
    const name = line.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) bad(lineNo, `label name '${name}'`);
    if (line[eq + 1] !== '"') bad(lineNo, `label ${name} value is not quoted`);
    let value = '';
    let j = eq + 2;
    for (;; j++) {
      const c = line[j];
      if (c === undefined) bad(lineNo, `label ${name} value is not closed`);
      if (c === '"') break;
      if (c === '\\') {
        const e = line[++j];
        if (e === 'n') value += '\n';
        else if (e === '\\' || e === '"') value += e;
        else bad(lineNo, `label ${name} has the escape \\${e ?? ''}`);
      } else value += c;
    }
    if (++count > MAX_LABELS) bad(lineNo, `more than ${MAX_LABELS} labels`);
    if (Object.hasOwn(labels, name)) bad(lineNo, `label ${name} twice`);
    labels[name] = value;
    i = j + 1;
    while (line[i] === ' ') i++;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') bad(lineNo, 'labels not separated by a comma');
  }
}

export function parsePrometheusText(text: string): PromSample[] {
  const out: PromSample[] = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (out.length >= MAX_SAMPLES) bad(n + 1, `more than ${MAX_SAMPLES} samples`);
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    let name: string;
    let labels: Record<string, string> = {};
    let rest: string;
    if (brace >= 0 && (space < 0 || brace < space)) {
      name = line.slice(0, brace);
      const parsed = parseLabels(line, brace + 1, n + 1);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    } else {
      if (space < 0) bad(n + 1, 'sample without a value');
      name = line.slice(0, space);
      rest = line.slice(space);
    }
    if (!NAME.test(name)) bad(n + 1, `metric name '${name}'`);
    // A value, then optionally a timestamp in ms.
    const fields = rest.trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2 || fields[0] === '') bad(n + 1, 'expected a value and at most a timestamp');
    out.push({ name, labels, value: parseValue(fields[0]!, n + 1) });
  }
  return out;
}
