// A progress bar with rate and ETA for long CLI operations (main thread of the CLI process),
// drawn on the terminal's status line (CliIo.progress: stderr, only on a TTY) and a no-op
// elsewhere. The interface is the subset of cli-progress's SingleBar the CLI uses (start, update,
// setTotal, stop), so the in-house line below can give way to that library without touching
// callers. The clock is injected for tests.
import type { CliIo } from './io.js';

export interface ProgressBar {
  /** Starts at `value` of `total` (null: unknown, only a counter and a rate are shown). */
  start(total: number | null, value: number): void;
  update(value: number): void;
  setTotal(total: number | null): void;
  /** Clears the status line. */
  stop(): void;
}

/** Redraws at most this often: a terminal write per record would cost more than the record. */
const REDRAW_MS = 100;
const BAR_WIDTH = 20;

function seconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  return s < 60 ? `${Math.ceil(s)}s` : s < 3600 ? `${Math.floor(s / 60)}m${Math.ceil(s % 60)}s` : `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

/** The status line for `value` of `total` units after `elapsedMs` (pure). */
export function progressText(label: string, unit: string, value: number, total: number | null, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (value * 1000) / elapsedMs : 0;
  const rateText = `${rate >= 100 ? Math.round(rate) : rate.toFixed(1)} ${unit}/s`;
  if (total === null || total <= 0) return `${label} ${value} ${unit} ${rateText}`;
  const done = Math.min(1, value / total);
  const filled = Math.round(done * BAR_WIDTH);
  const eta = rate > 0 ? seconds((total - Math.min(value, total)) / rate) : '?';
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.floor(done * 100)}% ${value}/${total} ${unit} ${rateText} ETA ${eta}`;
}

export function progressBar(io: CliIo, label: string, unit: string, now: () => number = Date.now): ProgressBar {
  const draw = io.progress;
  if (draw === undefined) return { start: () => undefined, update: () => undefined, setTotal: () => undefined, stop: () => undefined };
  let total: number | null = null;
  let startedAt = now();
  let drawnAt = -Infinity;
  let value = 0;
  const redraw = (force: boolean): void => {
    const t = now();
    if (!force && t - drawnAt < REDRAW_MS) return;
    drawnAt = t;
    draw(progressText(label, unit, value, total, t - startedAt));
  };
  return {
    start: (t, v) => { total = t; value = v; startedAt = now(); redraw(true); },
    update: (v) => { value = v; redraw(false); },
    setTotal: (t) => { total = t; redraw(false); },
    stop: () => draw(''),
  };
}
