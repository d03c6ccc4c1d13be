// Test helper: a long-running external client (a consumer-group member: kcat -G, a Python
// driver) whose stdout and stderr are read line by line while it runs, so a test can wait for
// what it reports (assignments, messages) and then stop it with a signal. Runs on the test's
// main thread. Invariants: the child is SIGKILLed by its pid when its lifetime bound passes or
// when a stop() does not end it in time; at most MAX_LINES lines per stream are kept (a child
// that prints more fails the test instead of growing memory).

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { ExitStatus } from './broker_process.js';
import { sleep, withTimeout } from './broker_process.js';

const MAX_LINES = 200_000;
const POLL_MS = 50;

/** Lines of one stream; a partial last line is held back until its newline arrives. */
export class LineSink {
  readonly lines: string[] = [];
  overflowed = false;
  private rest = '';

  push(chunk: string): void {
    const parts = (this.rest + chunk).split('\n');
    this.rest = parts.pop() ?? '';
    for (const line of parts) {
      if (this.lines.length >= MAX_LINES) {
        this.overflowed = true;
        return;
      }
      this.lines.push(line);
    }
  }

  /** Ends the stream: a final line without a newline still counts. */
  end(): void {
    if (this.rest !== '') this.push('\n');
  }
}

export class LineChild {
  readonly out = new LineSink();
  readonly err = new LineSink();
  readonly exited: Promise<ExitStatus>;
  private status: ExitStatus | null = null;
  private readonly child: ChildProcess;
  private readonly lifetime: NodeJS.Timeout;

  /** Starts `cmd`; it is SIGKILLed after `maxLifetimeMs` whatever happens. */
  constructor(readonly name: string, cmd: string, args: readonly string[], maxLifetimeMs: number) {
    this.child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (d: string) => this.out.push(d));
    this.child.stderr?.setEncoding('utf8').on('data', (d: string) => this.err.push(d));
    this.lifetime = setTimeout(() => this.child.kill('SIGKILL'), maxLifetimeMs);
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        clearTimeout(this.lifetime);
        this.out.end();
        this.err.end();
        this.status = { code, signal };
        resolve(this.status);
      });
    });
  }

  get running(): boolean {
    return this.status === null;
  }

  /** Polls `ok` until it holds; fails when the child exits first or `timeoutMs` passes. */
  async waitFor(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ok()) {
      if (this.out.overflowed || this.err.overflowed) throw new Error(`${this.name}: more than ${MAX_LINES} output lines`);
      if (!this.running) throw new Error(`${this.name} exited (${this.describeExit()}) before ${what}:\n${this.stderrTail()}`);
      if (Date.now() >= deadline) throw new Error(`${this.name}: no ${what} within ${timeoutMs} ms:\n${this.stderrTail()}`);
      await sleep(POLL_MS);
    }
  }

  /** Sends `signal` and waits for the exit; SIGKILL (and throw) if it takes longer than `timeoutMs`. */
  async stop(timeoutMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<ExitStatus> {
    if (!this.running) return this.exited;
    this.child.kill(signal);
    try {
      return await withTimeout(this.exited, timeoutMs, `${this.name} after ${signal}`);
    } catch (err) {
      this.child.kill('SIGKILL');
      await withTimeout(this.exited, 10_000, `${this.name} after SIGKILL`);
      throw new Error(`${(err as Error).message}:\n${this.stderrTail()}`);
    }
  }

  stderrTail(lines = 30): string {
    return this.err.lines.slice(-lines).join('\n');
  }

  private describeExit(): string {
    return this.status === null ? 'running' : `code ${this.status.code}, signal ${this.status.signal}`;
  }
}

/** Stops every child still running (for `after`/`finally`): SIGKILL, bounded wait. */
export async function killAll(children: readonly LineChild[]): Promise<void> {
  await Promise.all(children.filter((c) => c.running).map((c) => c.stop(5000, 'SIGKILL').catch(() => undefined)));
}
