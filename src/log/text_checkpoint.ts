// Kafka's text checkpoint layout, shared by the per-partition leader-epoch and high-watermark
// checkpoints: a version line ("0"), an entry count line, then one line per entry of
// space-separated non-negative integers. Pure encode/decode plus the file read; the write is
// writeFileAtomicSync (rename), so a reader sees a whole old or a whole new file. Used on the
// shard worker that owns the partition.
// Invariant: decode accepts exactly what encode produces for the given column count; anything
// else (a truncated, garbled or foreign file) reads as absent.
import { readFileSync } from 'node:fs';

const VERSION = '0';
/** Checkpoints here hold at most this many entries; a larger count marks a damaged file. */
const MAX_ENTRIES = 1_000_000;
const INTEGER = /^(0|[1-9]\d{0,15})$/;

export function encodeTextCheckpoint(rows: readonly (readonly number[])[]): Buffer {
  const lines = [VERSION, String(rows.length), ...rows.map((r) => r.join(' '))];
  return Buffer.from(lines.join('\n') + '\n', 'latin1');
}

/** The rows of a checkpoint whose lines each hold `columns` integers, or null when it is not one. */
export function decodeTextCheckpoint(buf: Buffer, columns: number): number[][] | null {
  const text = buf.toString('latin1');
  if (!text.endsWith('\n')) return null;
  const lines = text.slice(0, -1).split('\n');
  if (lines[0] !== VERSION || lines.length < 2 || !INTEGER.test(lines[1]!)) return null;
  const count = Number(lines[1]);
  if (count > MAX_ENTRIES || lines.length !== count + 2) return null;
  const rows: number[][] = [];
  for (const line of lines.slice(2)) {
    const fields = line.split(' ');
    if (fields.length !== columns || !fields.every((f) => INTEGER.test(f))) return null;
    const row = fields.map(Number);
    if (!row.every(Number.isSafeInteger)) return null;
    rows.push(row);
  }
  return rows;
}

/** The file's contents, or null when it does not exist. Other read errors (EIO, EACCES) throw. */
export function readFileIfPresent(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The file's rows; null when it is missing or damaged. */
export function readTextCheckpoint(path: string, columns: number): number[][] | null {
  const buf = readFileIfPresent(path);
  return buf && decodeTextCheckpoint(buf, columns);
}
