// Test helper: runs the compiled `sluice` CLI entry as a child process and collects its exit
// code and output (bounded by a 30 s timeout).
import { execFile } from 'node:child_process';
import { BROKER_MAIN } from './broker_process.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function sluice(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BROKER_MAIN, ...args], { timeout: 30_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}
