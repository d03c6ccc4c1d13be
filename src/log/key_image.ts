// The latest value per key of a log whose records are keyed state (a compacted topic): what
// compaction would keep. Its owner feeds it every record that became durable, in log order, and
// can rewrite the whole image as fresh records, after which every older segment may go (replaying
// from any segment boundary before the rewrite and then the rewrite rebuilds the same state:
// anything older is either superseded by the rewrite or deleted before it).
// Owned by whoever writes the log; keys are held as latin1 strings of their bytes.

export interface KeyedRecord {
  key: Buffer;
  value: Buffer | null;
}

export class KeyImage {
  private readonly latest = new Map<string, KeyedRecord>();
  private liveBytes = 0;

  /** A record became durable: it replaces its key's value, or a null value removes the key. */
  apply(r: KeyedRecord): void {
    const k = r.key.toString('latin1');
    const prev = this.latest.get(k);
    if (prev) this.liveBytes -= prev.key.length + (prev.value?.length ?? 0);
    // Deleted first so that the image lists keys in the order of their latest records, as
    // compaction keeps them: a state spread over several keys is rewritten in the order it was last written.
    this.latest.delete(k);
    if (r.value === null) return;
    this.latest.set(k, r);
    this.liveBytes += r.key.length + r.value.length;
  }

  /** Keys with a value. */
  get size(): number {
    return this.latest.size;
  }

  /** Key and value bytes of the live records (without record framing). */
  get bytes(): number {
    return this.liveBytes;
  }

  /** The live records, in batches of about `batchBytes`, for rewriting the image. */
  batches(batchBytes: number): KeyedRecord[][] {
    const out: KeyedRecord[][] = [];
    let cur: KeyedRecord[] = [];
    let size = 0;
    for (const r of this.latest.values()) {
      const n = r.key.length + (r.value?.length ?? 0);
      if (cur.length > 0 && size + n > batchBytes) {
        out.push(cur);
        cur = [];
        size = 0;
      }
      cur.push(r);
      size += n;
    }
    if (cur.length > 0) out.push(cur);
    return out;
  }
}
