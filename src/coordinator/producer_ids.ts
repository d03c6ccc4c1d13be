// Hands out idempotent producer ids that stay unique across restarts. Like Kafka's id blocks:
// the next block's start is persisted before any id from the block is handed out, so a crash
// can skip ids but never repeat one. Main thread only.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const BLOCK = 1000;

export class ProducerIdAllocator {
  private next = 0;
  private blockEnd = 0;
  private readonly file: string;

  constructor(metaDir: string) {
    this.file = join(metaDir, 'producer_id_block');
    try {
      this.next = this.blockEnd = Number(readFileSync(this.file, 'utf8').trim()) || 0;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  allocate(): number {
    if (this.next >= this.blockEnd) {
      this.blockEnd = this.next + BLOCK;
      const tmp = `${this.file}.tmp`;
      const fd = openSync(tmp, 'w');
      try {
        writeFileSync(fd, String(this.blockEnd));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.file);
    }
    return this.next++;
  }
}
