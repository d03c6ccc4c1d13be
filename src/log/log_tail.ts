// Reads the newest bytes of a partition directory's segment files into nothing but the page
// cache (a warming broker's read warm-up, cluster/warm_up.ts): newest segment first, backwards,
// up to a byte budget, in 1 MiB reads through one buffer. Read-only and tolerant of the owning
// actor deleting or rolling segments meanwhile (a vanished file counts as read). Main thread
// (asynchronous file reads, one at a time, so a warm-up never crowds the event loop).
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LOG_SUFFIX } from './segment.js';

const CHUNK_BYTES = 1 << 20;

function vanished(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Bytes read from the end of `dir`'s segments, at most `maxBytes`; 0 for a missing directory. */
export async function readLogTail(dir: string, maxBytes: number): Promise<number> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(LOG_SUFFIX)).sort().reverse();
  } catch (err) {
    if (vanished(err)) return 0;
    throw err;
  }
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(1, maxBytes)));
  let read = 0;
  for (const name of names) {
    if (read >= maxBytes) break;
    let file;
    try {
      file = await open(join(dir, name), 'r');
    } catch (err) {
      if (vanished(err)) continue;
      throw err;
    }
    try {
      let end = (await file.stat()).size;
      while (end > 0 && read < maxBytes) {
        const length = Math.min(buffer.length, end, maxBytes - read);
        const { bytesRead } = await file.read(buffer, 0, length, end - length);
        if (bytesRead === 0) break;
        read += bytesRead;
        end -= length;
      }
    } finally {
      await file.close();
    }
  }
  return read;
}
