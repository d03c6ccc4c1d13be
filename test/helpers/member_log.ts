// Test helper: what one external consumer-group member (test/interop/group_client.py, or kcat -G)
// reported, parsed incrementally from its output lines while it runs: its rebalance events in
// order, the partitions it holds now, the messages it consumed and any errors it printed. Runs
// on the test's main thread. Invariant: `held` is always the result of applying `events` in
// order (assign adds, revoke and lost remove), so tests can check the protocol's guarantees on
// the event history and wait on the current holdings.

import { LineChild } from './line_child.js';
import type { LineSink } from './line_child.js';

export interface RebalanceEvent {
  readonly kind: 'assign' | 'revoke' | 'lost';
  readonly partitions: readonly number[];
  /** Seen after the member began to shut down (its closing revoke). */
  readonly closing: boolean;
}

export interface Consumed {
  readonly partition: number;
  readonly offset: number;
  readonly value: Buffer | null;
}

type Parsed =
  | { kind: 'assign' | 'revoke' | 'lost'; partitions: number[] }
  | { kind: 'message'; partition: number; offset: number; value: Buffer | null }
  | { kind: 'stopping' }
  | { kind: 'error'; text: string }
  | null;

const partitionList = (s: string): number[] => (s === '' ? [] : s.split(',').map(Number));

/** group_client.py's stdout protocol (see its header). */
export function parseGroupClientLine(line: string): Parsed {
  const space = line.indexOf(' ');
  const word = space < 0 ? line : line.slice(0, space);
  const rest = space < 0 ? '' : line.slice(space + 1);
  switch (word) {
    case 'assign': case 'revoke': case 'lost':
      return { kind: word, partitions: partitionList(rest) };
    case 'm': {
      const [p, o, v] = rest.split(' ');
      return { kind: 'message', partition: Number(p), offset: Number(o), value: v === '-' || v === undefined ? null : Buffer.from(v, 'hex') };
    }
    case 'stopping':
      return { kind: 'stopping' };
    case 'closed': case '':
      return null;
    default:
      return { kind: 'error', text: line };
  }
}

/** kcat's stdout with KCAT_GROUP_FORMAT: "partition offset value" (text values only). */
export const KCAT_GROUP_FORMAT = '%p %o %s\\n';

export function parseKcatMessage(line: string): Parsed {
  if (line === '') return null;
  const [p, o] = line.split(' ', 2);
  const value = line.slice(`${p} ${o} `.length);
  return { kind: 'message', partition: Number(p), offset: Number(o), value: Buffer.from(value, 'latin1') };
}

// kcat (eager protocol) prints at verbosity 1, on stderr:
//   % Group G rebalanced (memberid M): assigned: T [0], T [3]
//   % Group G rebalanced (memberid M): revoked: T [0], T [3]
const KCAT_REBALANCE = /rebalanced \(memberid [^)]*\): (assigned|revoked): (.*)$/;

export function parseKcatStderr(line: string): Parsed {
  const m = KCAT_REBALANCE.exec(line);
  if (m === null) return /ERROR|FAIL/i.test(line) ? { kind: 'error', text: line } : null;
  const partitions = [...(m[2] ?? '').matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1]));
  return { kind: m[1] === 'assigned' ? 'assign' : 'revoke', partitions };
}

/** One member process and what it has reported so far (call update() before reading). */
export class MemberLog {
  readonly events: RebalanceEvent[] = [];
  readonly consumed: Consumed[] = [];
  readonly errors: string[] = [];
  readonly held = new Set<number>();
  private closing = false;
  private readonly cursors = new Map<LineSink, number>();

  constructor(
    readonly child: LineChild,
    private readonly streams: readonly { sink: LineSink; parse: (line: string) => Parsed }[],
  ) {}

  /** A group_client.py member. */
  static python(name: string, python: string, script: string, args: readonly string[], maxLifetimeMs: number): MemberLog {
    const child = new LineChild(name, python, [script, ...args], maxLifetimeMs);
    return new MemberLog(child, [{ sink: child.out, parse: parseGroupClientLine }]);
  }

  /** A kcat -G member printing KCAT_GROUP_FORMAT (its args must include that -f). */
  static kcat(name: string, kcat: string, args: readonly string[], maxLifetimeMs: number): MemberLog {
    const child = new LineChild(name, kcat, args, maxLifetimeMs);
    return new MemberLog(child, [{ sink: child.out, parse: parseKcatMessage }, { sink: child.err, parse: parseKcatStderr }]);
  }

  update(): this {
    for (const { sink, parse } of this.streams) {
      const from = this.cursors.get(sink) ?? 0;
      for (let i = from; i < sink.lines.length; i++) this.apply(parse(sink.lines[i] as string));
      this.cursors.set(sink, sink.lines.length);
    }
    return this;
  }

  /** Waits (bounded) until `ok` holds on the updated log. */
  waitFor(what: string, ok: (m: this) => boolean, timeoutMs: number): Promise<void> {
    return this.child.waitFor(what, () => ok(this.update()), timeoutMs);
  }

  private apply(p: Parsed): void {
    if (p === null) return;
    switch (p.kind) {
      case 'message':
        this.consumed.push(p);
        return;
      case 'stopping':
        this.closing = true;
        return;
      case 'error':
        this.errors.push(p.text);
        return;
      default:
        this.events.push({ kind: p.kind, partitions: p.partitions, closing: this.closing });
        for (const q of p.partitions) {
          if (p.kind === 'assign') this.held.add(q);
          else this.held.delete(q);
        }
    }
  }
}

/** True when the members' current holdings are disjoint, each non-empty, and together 0..partitions-1. */
export function coversExactly(members: readonly MemberLog[], partitions: number): boolean {
  const seen = new Set<number>();
  for (const m of members) {
    m.update();
    if (m.held.size === 0) return false;
    for (const p of m.held) {
      if (seen.has(p)) return false;
      seen.add(p);
    }
  }
  return seen.size === partitions && [...seen].every((p) => p >= 0 && p < partitions);
}
