// Test helper: runs the compiled `sluice` CLI entry as a child process and collects its exit
// code and output (bounded by a timeout, 30 s unless the caller says otherwise), or runs it in
// this process with captured output.
import { execFile } from 'node:child_process';
import { BROKER_MAIN } from './broker_process.js';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function sluice(args: readonly string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BROKER_MAIN, ...args], { timeout: timeoutMs, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** What `sluice` printed and returned when run in this process (runCli with a captured CliIo). */
export interface InProcessRun {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in this process against captured output (fake brokers in the same test). */
export async function cliInProcess(argv: string[]): Promise<InProcessRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: {}, out: (t) => out.push(t), err: (t) => err.push(t) };
  const code = await runCli(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}
