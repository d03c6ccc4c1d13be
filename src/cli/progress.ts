// A progress bar with rate and ETA for long CLI operations (main thread of the CLI process):
// cli-progress's SingleBar drawing on CliIo.progressStream (stderr, only when it is a terminal),
// and a no-op elsewhere, so piped stdout stays data and logs stay free of redraw sequences.
import { SingleBar } from 'cli-progress';
import type { CliIo } from './io.js';

export interface ProgressBar {
  /** Starts at `value` of `total` (null: unknown, only a counter and a rate are shown). */
  start(total: number | null, value: number): void;
  update(value: number): void;
  /** Clears the status line. */
  stop(): void;
}

/** Redraws at most this often: a terminal write per record would cost more than the record. */
const REDRAW_FPS = 10;
/** The ETA is the rate over this many recent updates, so a stall or a burst moves it gradually. */
const ETA_UPDATES = 50;
/**
 * Updates reach the bar at least this far apart: records arrive in bursts within one millisecond
 * (a chunk of stdin lines, a fetched batch), and samples that close read as an infinite rate and
 * an ETA of 0 s. The latest value is still handed over before the bar stops.
 */
const SAMPLE_MS = 100;

const NO_BAR: ProgressBar = { start: () => undefined, update: () => undefined, stop: () => undefined };

/** Units per second, with a decimal only while that is below 100. */
function rateText(units: number, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (units * 1000) / elapsedMs : 0;
  return rate >= 100 ? String(Math.round(rate)) : rate.toFixed(1);
}

export function progressBar(io: CliIo, label: string, unit: string): ProgressBar {
  const stream = io.progressStream;
  if (stream === undefined) return NO_BAR;
  let bar: SingleBar | null = null;
  let startedAt = 0;
  let startValue = 0;
  let sampledAt = 0;
  let latest = 0;
  const rate = (value: number): { rate: string } => ({ rate: rateText(value - startValue, Date.now() - startedAt) });
  const sample = (): void => {
    sampledAt = Date.now();
    bar?.update(latest, rate(latest));
  };
  return {
    start: (total, value) => {
      bar?.stop();
      // The format is fixed per bar: with a total, a bar, ETA and the rate; without, a counter and the rate.
      const format = total === null || total <= 0
        ? `${label} {value} ${unit} {rate} ${unit}/s`
        : `${label} [{bar}] {percentage}% {value}/{total} ${unit} {rate} ${unit}/s ETA {eta_formatted}`;
      // linewrap true: the library trims each line to the terminal's width rather than turning the
      // terminal's wrapping off (which a crash mid-bar would leave off).
      bar = new SingleBar({ stream, format, fps: REDRAW_FPS, etaBuffer: ETA_UPDATES, barsize: 20, clearOnComplete: true, linewrap: true, gracefulExit: false });
      startedAt = sampledAt = Date.now();
      startValue = latest = value;
      bar.start(total ?? 0, value, rate(value));
    },
    update: (value) => {
      latest = value;
      if (Date.now() - sampledAt >= SAMPLE_MS) sample();
    },
    stop: () => {
      if (bar === null) return;
      sample();
      bar.stop();
      bar = null;
    },
  };
}
