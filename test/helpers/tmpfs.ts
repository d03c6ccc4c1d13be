// A tiny tmpfs for tests that need a full disk (ENOSPC). Mounting needs root; where it is
// refused the caller skips, with the reason returned here.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Mounts a tmpfs of `size` (mount's syntax, e.g. '1m'); the reason when that is not permitted here. */
export function tinyTmpfs(size: string): { dir: string; unmount(): void } | string {
  if (process.getuid?.() !== 0) return 'not running as root';
  const dir = mkdtempSync(join(tmpdir(), 'sluice-enospc-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmdirSync(dir);
    return `mount -t tmpfs not permitted: ${(err as Error).message.split('\n')[0]}`;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', [dir]);
      rmdirSync(dir);
    },
  };
}
