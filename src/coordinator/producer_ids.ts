// Hands out idempotent producer ids that stay unique across restarts. Like Kafka's id blocks:
// the next block's start is persisted before any id from the block is handed out, so a crash
// can skip ids but never repeat one. Main thread only.
// The block is persisted asynchronously (libuv's pool): an fsync on the main thread would stop
// every connection for as long as the disk takes, which under `--flush never` with a lot of
// dirty page cache (an ext4 journal commit writes it out) can be many seconds. Callers that
// arrive while a block is being persisted wait for that same write.
import { readFileSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';

const BLOCK = 1000;

/**
 * Where idempotent producer ids come from (InitProducerId). Ids are unique across the cluster's
 * life; the metadata quorum will hand out blocks from its controller behind this interface.
 */
export interface ProducerIdSource {
  allocate(): Promise<number>;
}

/** The single-node source: blocks recorded in a file of the data directory. */
export class ProducerIdAllocator implements ProducerIdSource {
  private next = 0;
  private blockEnd = 0;
  private persisting: Promise<void> | null = null;
  private readonly file: string;

  constructor(metaDir: string) {
    this.file = join(metaDir, 'producer_id_block');
    try {
      this.next = this.blockEnd = Number(readFileSync(this.file, 'utf8').trim()) || 0;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  async allocate(): Promise<number> {
    while (this.next >= this.blockEnd) {
      this.persisting ??= this.persistBlock(this.blockEnd + BLOCK).finally(() => {
        this.persisting = null;
      });
      await this.persisting;
    }
    return this.next++;
  }

  private async persistBlock(end: number): Promise<void> {
    const tmp = `${this.file}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(String(end));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    this.next = Math.max(this.next, this.blockEnd);
    this.blockEnd = end;
  }
}
