// The size of the file system holding a directory and the bytes still writable on it, as statfs
// reports them. Any thread; read by DescribeLogDirs and by the metrics scrape (log dir space).

import { statfs } from 'node:fs/promises';

/** A file system's size and the bytes still writable by this process; -1 when unknown. */
export interface DiskSpace {
  readonly totalBytes: number;
  readonly usableBytes: number;
}

const UNKNOWN_SPACE: DiskSpace = { totalBytes: -1, usableBytes: -1 };

/** `dir`'s file system as statfs sees it (usable: the blocks available to unprivileged users, as Java's getUsableSpace). */
export async function diskSpaceOf(dir: string): Promise<DiskSpace> {
  try {
    const s = await statfs(dir);
    return { totalBytes: s.blocks * s.bsize, usableBytes: s.bavail * s.bsize };
  } catch {
    return UNKNOWN_SPACE;
  }
}
