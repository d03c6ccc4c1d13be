// Broker CPU profile summaries (bench process, main thread): reads every .cpuprofile a broker run
// under `node --cpu-prof` wrote (main thread and shard workers), keeps the samples inside the
// load window, and ranks functions by self samples. Positions are mapped through the compiled
// files' source maps back to the .ts file:line where the function is defined.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { table } from './report.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  readonly fn: string;
  /** Repo-relative file:line of the function (TypeScript when a source map resolves it). */
  readonly where: string;
  /** For Node internals and natives: the nearest calling function in a file of ours, or ''. */
  readonly via: string;
  readonly selfMs: number;
  /** Share of this thread's busy (non-idle) samples in the load window. */
  readonly selfPct: number;
}

export interface ThreadProfile {
  readonly file: string;
  readonly busyMs: number;
  readonly idleMs: number;
  readonly top: HotSpot[];
}

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const IDLE = new Set(['(idle)', '(root)']);

const maps = new Map<string, SourceMap | null>();
function sourceMapFor(jsPath: string): SourceMap | null {
  let m = maps.get(jsPath);
  if (m === undefined) {
    const mapPath = `${jsPath}.map`;
    m = existsSync(mapPath) ? new SourceMap(JSON.parse(readFileSync(mapPath, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]) : null;
    maps.set(jsPath, m);
  }
  return m;
}

/** file:line (1-based) of a call frame, through the source map when there is one. */
function locate(cf: CallFrame): string {
  if (!cf.url.startsWith('file://')) return cf.url === '' ? '(native)' : cf.url;
  const js = fileURLToPath(cf.url);
  const entry = sourceMapFor(js)?.findEntry(cf.lineNumber, cf.columnNumber);
  if (entry !== undefined && 'originalSource' in entry && typeof entry.originalSource === 'string') {
    const src = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : resolve(dirname(js), entry.originalSource);
    return `${relative(REPO_ROOT, src)}:${entry.originalLine + 1}`;
  }
  const rel = relative(REPO_ROOT, js);
  return `${rel.startsWith('..') ? js : rel}:${cf.lineNumber + 1}`;
}

/** Monotonic-clock microseconds: the clock V8 stamps profile samples with. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export interface Window {
  readonly fromUs: number;
  readonly toUs: number;
}

/**
 * Samples per node id inside `window`, and the nominal sample interval (median delta, ms).
 * Samples are counted rather than timed: on a starved machine one delayed sample can span
 * hundreds of ms, which timing would pin on whatever function happened to be sampled.
 */
function selfSamples(p: CpuProfile, window: Window | null): { counts: Map<number, number>; intervalMs: number } {
  const counts = new Map<number, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (window !== null && (t < window.fromUs || t > window.toUs)) continue;
    const id = p.samples[i] as number;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const deltas = [...p.timeDeltas].sort((a, b) => a - b);
  return { counts, intervalMs: (deltas[deltas.length >> 1] ?? 1000) / 1000 };
}

/** parent id per node id. */
function parents(p: CpuProfile): Map<number, number> {
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return parent;
}

function isOurs(cf: CallFrame): boolean {
  return cf.url.startsWith('file://') && !cf.url.includes('/node_modules/');
}

/** For a frame outside our code: "fn (file:line)" of the nearest ancestor in our code. */
function caller(node: ProfileNode, byId: Map<number, ProfileNode>, parent: Map<number, number>): string {
  if (isOurs(node.callFrame)) return '';
  for (let id = parent.get(node.id); id !== undefined; id = parent.get(id)) {
    const up = byId.get(id);
    if (up !== undefined && isOurs(up.callFrame)) return `${up.callFrame.functionName || '(anonymous)'} (${locate(up.callFrame)})`;
  }
  return '';
}

export function summarizeProfile(path: string, topN: number, window: Window | null): ThreadProfile {
  const p = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const { counts, intervalMs } = selfSamples(p, window);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = parents(p);
  const byFn = new Map<string, { fn: string; where: string; via: string; n: number }>();
  let busy = 0;
  let idle = 0;
  for (const node of p.nodes) {
    const n = counts.get(node.id) ?? 0;
    if (n === 0) continue;
    const fn = node.callFrame.functionName === '' ? '(anonymous)' : node.callFrame.functionName;
    if (IDLE.has(fn)) {
      idle += n;
      continue;
    }
    busy += n;
    const where = locate(node.callFrame);
    const via = caller(node, byId, parent);
    const key = `${fn}@${where}:${node.callFrame.columnNumber}<${via}`;
    const e = byFn.get(key) ?? { fn, where, via, n: 0 };
    e.n += n;
    byFn.set(key, e);
  }
  const top = [...byFn.values()].sort((a, b) => b.n - a.n).slice(0, topN).map((e) => ({
    fn: e.fn, where: e.where, via: e.via, selfMs: Math.round(e.n * intervalMs), selfPct: busy > 0 ? Math.round((1000 * e.n) / busy) / 10 : 0,
  }));
  return { file: path, busyMs: Math.round(busy * intervalMs), idleMs: Math.round(idle * intervalMs), top };
}

/** Every .cpuprofile in dir, largest busy time first (the main thread is usually first). */
export function summarizeProfileDir(dir: string, topN: number, window: Window | null): ThreadProfile[] {
  return readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => summarizeProfile(join(dir, f), topN, window))
    .sort((a, b) => b.busyMs - a.busyMs);
}

/** Which thread wrote a profile: Node names them CPU.<date>.<time>.<pid>.<threadId>.<seq>.cpuprofile. */
export function threadLabel(file: string): string {
  const m = /\.(\d+)\.(\d+)\.(\d+)\.cpuprofile$/.exec(file);
  if (m === null) return file;
  return m[2] === '0' ? 'main thread' : `worker thread ${m[2]}`;
}

export interface ProfileRun {
  readonly dir: string;
  readonly threads: ThreadProfile[];
}

export function profileText(p: ProfileRun): string {
  const out: string[] = [];
  for (const t of p.threads) {
    out.push(`${threadLabel(t.file)} (${basename(t.file)}): ~${t.busyMs} ms busy, ~${t.idleMs} ms idle in the load window`);
    out.push(table(['#', 'self ms', 'self %', 'function', 'where', 'called from (our code)'],
      t.top.map((h, i) => [String(i + 1), String(h.selfMs), h.selfPct.toFixed(1), h.fn, h.where, h.via])));
  }
  return out.join('\n');
}
