// Test helper: runs an external client (kcat, /usr/bin/python3) as a child process with a hard
// timeout, stdin from a file or buffer, stdout captured (capped) or written to a file. Runs on
// the test's main thread. Invariants: the child is SIGKILLed by its pid when the timeout passes;
// captured output never exceeds MAX_CAPTURE bytes.

import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { Readable } from 'node:stream';

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  timeoutMs: number;
  /** Bytes for stdin, a path whose contents become stdin, or a stream piped in as it is written (a paced producer). */
  input?: Buffer | { file: string } | Readable;
  /** Write stdout to this file instead of capturing it. */
  stdoutFile?: string;
  env?: Record<string, string>;
}

const MAX_CAPTURE = 64 << 20;

export function run(cmd: string, args: readonly string[], opts: RunOptions): Promise<ChildResult> {
  const started = Date.now();
  const input = opts.input;
  const stdinFd = input !== undefined && !Buffer.isBuffer(input) && !(input instanceof Readable) ? openSync(input.file, 'r') : null;
  const stdoutFd = opts.stdoutFile !== undefined ? openSync(opts.stdoutFile, 'w') : null;
  try {
    const child = spawn(cmd, args, {
      stdio: [stdinFd ?? 'pipe', stdoutFd ?? 'pipe', 'pipe'],
      env: { ...process.env, ...opts.env },
    });
    return new Promise((resolve, reject) => {
      const out: Buffer[] = [];
      let outBytes = 0;
      let err = '';
      child.stdout?.on('data', (d: Buffer) => {
        if (outBytes < MAX_CAPTURE) out.push(d);
        outBytes += d.length;
      });
      child.stderr?.on('data', (d: Buffer) => {
        if (err.length < 1 << 20) err += d.toString();
      });
      const timer = setTimeout(() => {
        err += `\n[killed after ${opts.timeoutMs} ms]`;
        child.kill('SIGKILL');
      }, opts.timeoutMs);
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout: Buffer.concat(out), stderr: err, ms: Date.now() - started });
      });
      if (child.stdin !== null) {
        child.stdin.on('error', () => undefined);
        if (input instanceof Readable) input.pipe(child.stdin);
        else child.stdin.end(Buffer.isBuffer(input) ? input : undefined);
      }
    });
  } finally {
    if (stdinFd !== null) closeSync(stdinFd);
    if (stdoutFd !== null) closeSync(stdoutFd);
  }
}

/** Throws with the child's stderr when it did not exit 0. */
export function assertOk(r: ChildResult, what: string): ChildResult {
  if (r.code !== 0) throw new Error(`${what} exited with ${r.code ?? r.signal} after ${r.ms} ms:\n${r.stderr.slice(-4000)}`);
  return r;
}
