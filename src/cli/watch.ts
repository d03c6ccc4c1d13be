// `--watch [SECONDS]` (main thread of the CLI process): runs a verb's snapshot again every interval
// until Ctrl-C — redrawing the screen on a terminal, else printing successive snapshots separated
// by a blank line — and returns the exit code of the last snapshot. A failed snapshot (a broker
// restarting) prints its message and counts as exit code 1; the next one tries again.
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError, optionValue } from './args.js';
import type { OptionSpec, ParsedArgs } from './args.js';
import { describeFailure } from './errors.js';
import type { CliIo } from './io.js';

export const WATCH_OPTION: OptionSpec = { name: 'watch', optionalNumber: true };

const DEFAULT_WATCH_SECONDS = 2;
const MAX_WATCH_SECONDS = 86_400;

/** The --watch interval in ms, or null when not watching. */
export function watchInterval(parsed: ParsedArgs): number | null {
  const raw = optionValue(parsed, 'watch');
  if (raw === undefined) return null;
  const seconds = raw === 'true' ? DEFAULT_WATCH_SECONDS : Number(raw);
  if (!(seconds >= 0.1 && seconds <= MAX_WATCH_SECONDS)) throw new UsageError(`--watch takes seconds in [0.1, ${MAX_WATCH_SECONDS}], got "${raw}"`);
  return Math.round(seconds * 1000);
}

export interface Snapshot {
  readonly text: string;
  readonly exitCode: number;
}

export async function watch(intervalMs: number, snapshot: () => Promise<Snapshot>, io: CliIo, signal: AbortSignal): Promise<number> {
  let exitCode = 0;
  for (let n = 0; !signal.aborted; n++) {
    let text: string;
    try {
      ({ text, exitCode } = await snapshot());
    } catch (err) {
      const failure = describeFailure(err);
      if (failure === null) throw err;
      text = `sluice: ${failure.message}`;
      exitCode = failure.exitCode;
    }
    if (signal.aborted) break;
    if (io.clear !== undefined) io.clear();
    else if (n > 0) io.out('');
    io.out(io.clear === undefined ? text : `every ${intervalMs / 1000}s, ${new Date().toISOString()} (Ctrl-C to stop)\n\n${text}`);
    await sleep(intervalMs, undefined, { signal }).catch(() => undefined);
  }
  return exitCode;
}

/** Runs `watch` with Ctrl-C (SIGINT, SIGTERM) as its end. */
export async function watchUntilInterrupted(intervalMs: number, snapshot: () => Promise<Snapshot>, io: CliIo): Promise<number> {
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await watch(intervalMs, snapshot, io, abort.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

export const WATCH_HELP = `  --watch [SECONDS]                   redraw every SECONDS [2] until Ctrl-C (on a non-terminal:
                                      snapshots separated by a blank line); exit code of the last`;
