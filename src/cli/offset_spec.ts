// The --offset grammar of `sluice consume` (pure; main thread of the CLI process): where each
// partition starts reading, as rpk's -o grammar says it. Parsing takes the clock as an argument
// (relative times like @-1h), and resolving takes the partition's bounds, so both are plain
// functions of their inputs. Every start is clamped into [log start, log end], as `group seek`.
import { UsageError } from './args.js';
import { seekOffset } from './group.js';
import type { PartitionBounds, SeekTarget } from './group.js';

export type OffsetSpec =
  | SeekTarget
  /** +N: N records after the log start. */
  | { kind: 'after-start'; count: number }
  /** -N: N records before the log end. */
  | { kind: 'before-end'; count: number };

export const OFFSET_GRAMMAR_HELP = `  start                 the log start (the oldest record kept)
  end                   the log end: only records produced from now on
  N                     offset N
  +N                    N records after the log start (+0 = start)
  -N                    N records before the log end (-0 = end; -3 = the last three)
  @MS                   the first record with a timestamp at or after MS (ms since the epoch)
  @ISO                  the same for an ISO 8601 time, e.g. @2026-12-02T14:00:00Z
  @-DURATION            the same for that long ago, e.g. @-1h, @-90s, @-2d, @-1h30m
                        (units ms, s, m, h, d)
Every start is clamped into [log start, log end]; a timestamp later than every record is the
log end.`;

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function bad(raw: string, why: string): UsageError {
  return new UsageError(`--offset "${raw}": ${why} (expected start, end, N, +N, -N, @MS, @ISO-TIME or @-DURATION like @-1h)`);
}

function count(raw: string, digits: string): number {
  const n = Number(digits);
  if (!Number.isSafeInteger(n)) throw bad(raw, 'the number is too large');
  return n;
}

/** A duration like 1h30m or 250ms in milliseconds, or null when it is not one. */
export function parseDuration(text: string): number | null {
  if (!/^(\d+(ms|s|m|h|d))+$/.test(text)) return null;
  let total = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * (UNIT_MS[unit as string] as number);
  return Number.isSafeInteger(total) ? total : null;
}

function timestamp(raw: string, text: string, nowMs: number): number {
  if (/^\d+$/.test(text)) return count(raw, text);
  if (text.startsWith('-')) {
    const ms = parseDuration(text.slice(1));
    if (ms === null) throw bad(raw, `"${text.slice(1)}" is not a duration`);
    return Math.max(0, nowMs - ms);
  }
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms) || ms < 0) throw bad(raw, `"${text}" is not an epoch-ms or ISO 8601 time`);
  return ms;
}

/** Parses one --offset value; `nowMs` anchors @-DURATION. */
export function parseOffsetSpec(raw: string, nowMs: number): OffsetSpec {
  if (raw === 'start' || raw === 'oldest') return { kind: 'earliest' };
  if (raw === 'end' || raw === 'newest') return { kind: 'latest' };
  if (raw.startsWith('@')) return { kind: 'timestamp', timestamp: timestamp(raw, raw.slice(1), nowMs) };
  const m = /^([+-]?)(\d+)$/.exec(raw);
  if (m === null) throw bad(raw, 'not understood');
  const n = count(raw, m[2] as string);
  if (m[1] === '+') return { kind: 'after-start', count: n };
  if (m[1] === '-') return { kind: 'before-end', count: n };
  return { kind: 'offset', offset: n };
}

/** The offset a partition with these bounds starts at. */
export function startOffset(spec: OffsetSpec, b: PartitionBounds): number {
  switch (spec.kind) {
    case 'after-start':
      return seekOffset({ kind: 'offset', offset: b.earliest + spec.count }, b);
    case 'before-end':
      return seekOffset({ kind: 'offset', offset: b.latest - spec.count }, b);
    default:
      return seekOffset(spec, b);
  }
}
