// Reads the process's descriptor limit at start (main thread). With the native addon the soft
// limit is first raised to the hard one (Node cannot call setrlimit itself); without it the broker
// works within the soft limit it was given, read from /proc/self/limits.
import { readFileSync } from 'node:fs';
import { loadAddon } from '../native/addon.js';

export interface NofileLimit {
  /** The limit the broker works within (the soft one, after any raise). */
  readonly soft: number;
  readonly hard: number;
  /** How it was learned, for the start-up log. */
  readonly source: 'addon' | '/proc/self/limits' | 'assumed';
}

/** Stand-in for "unlimited": far above anything a broker holds. */
const UNLIMITED = 1 << 30;
/** The usual default soft limit, assumed when the limit cannot be read. */
const ASSUMED_LIMIT = 1024;

const asLimit = (n: number): number => (n < 0 || !Number.isFinite(n) ? UNLIMITED : n);

/** Parses the "Max open files" line of a /proc/<pid>/limits text; null when absent. */
export function parseProcLimits(text: string): { soft: number; hard: number } | null {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (m === null) return null;
  const value = (s: string): number => (s === 'unlimited' ? UNLIMITED : Number(s));
  const soft = value(m[1]!);
  const hard = value(m[2]!);
  return Number.isInteger(soft) && Number.isInteger(hard) ? { soft, hard } : null;
}

/** The descriptor limit, raised to the hard one when the addon can. */
export function nofileLimit(): NofileLimit {
  const addon = loadAddon();
  if (typeof addon !== 'string' && typeof addon.raiseNofile === 'function') {
    try {
      const [soft, hard] = addon.raiseNofile();
      return { soft: asLimit(soft), hard: asLimit(hard), source: 'addon' };
    } catch {
      // fall through to what /proc says
    }
  }
  try {
    const parsed = parseProcLimits(readFileSync('/proc/self/limits', 'utf8'));
    if (parsed !== null) return { ...parsed, source: '/proc/self/limits' };
  } catch {
    // not Linux, or /proc not mounted
  }
  return { soft: ASSUMED_LIMIT, hard: ASSUMED_LIMIT, source: 'assumed' };
}
