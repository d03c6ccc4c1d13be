// A tiny tmpfs for tests that need a full disk (ENOSPC), and a ballast file that fills one.
// Mounting needs root; where it is refused the caller skips, with the reason returned here.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, writeSync } from 'node:fs';
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

/**
 * Writes `path` until its file system refuses with ENOSPC (big chunks, then small ones, so at most
 * a few bytes stay free); returns the bytes written. Meant for a tmpfs of tinyTmpfs, whose size
 * bounds the file.
 */
export function fillUntilFull(path: string): number {
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    for (const size of [1 << 20, 4096, 1]) {
      const chunk = Buffer.alloc(size);
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}
