// Process logging: pino JSON lines on stdout, human-readable (pino-pretty) when stdout is a
// terminal. Usable on any thread: output goes straight to file descriptor 1 with synchronous
// writes, so a worker's lines neither hop through the main thread nor get lost when it exits.
// Logging is control-plane only; nothing on a per-message path logs.

import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';

export type { Logger } from 'pino';

const STDOUT_FD = 1;

function destination(): DestinationStream {
  // process.stdout.isTTY is undefined inside worker threads; the descriptor answers everywhere.
  if (isatty(STDOUT_FD)) {
    // Loaded only for terminals, so production JSON logging never pays for the formatter. An ES
    // module has no `require`, so one is made for this module; inside the single executable's
    // bundle `require` exists and is the bundler's, which finds pino-pretty in the bundle.
    const pretty = (typeof require === 'function' ? require('pino-pretty') : createRequire(import.meta.url)('pino-pretty')) as typeof import('pino-pretty');
    return pretty.PinoPretty({ destination: STDOUT_FD, sync: true, translateTime: 'SYS:HH:MM:ss.l' });
  }
  return pino.destination({ dest: STDOUT_FD, sync: true });
}

/** A logger at `level` ('fatal'…'trace' or 'silent'); `name` tags every line (e.g. 'shard-2'). */
export function createLogger(level: string, name?: string): Logger {
  const options = name === undefined ? { level } : { level, name };
  return pino(options, destination());
}
