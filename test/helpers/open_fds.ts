// Counting this process's open file descriptors on a path, through /proc/self/fd (Linux), for
// tests that check who holds segment files open. Test-only.
import { readdirSync, readlinkSync } from 'node:fs';

/** Descriptors this process holds on `path`, or on files under it when it is a directory. */
export function openUnder(path: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(path)) n++;
    } catch {
      // closed between the listing and the readlink (the listing's own descriptor)
    }
  }
  return n;
}
