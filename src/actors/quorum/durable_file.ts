// Asynchronous durable file replacement for the metadata quorum's small files: write a temporary,
// fsync it, rename it over the target, fsync the directory (so the rename survives a crash).
// Runs on the quorum driver's thread; every step goes through libuv's pool, so the event loop
// never waits on the disk.
import { open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Makes the directory's entries (a rename, a new or removed file) durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Replaces `dir/name` with `data` atomically and durably through `dir/name + tmpSuffix`. */
export async function replaceFileDurably(dir: string, name: string, tmpSuffix: string, data: Uint8Array): Promise<void> {
  const tmp = join(dir, name + tmpSuffix);
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, join(dir, name));
  await fsyncDir(dir);
}

/** Writes all of `bytes` at `position` (resuming short writes). */
export async function writeAllAt(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}
