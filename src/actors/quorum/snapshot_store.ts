// The metadata quorum's snapshots on disk (cluster.md §1.7, KIP-630): at most one in force, the
// newest valid `.checkpoint` file in the metadata log directory. A new one is written to
// `.checkpoint.part` (whole, or in chunks as FetchSnapshot responses arrive), fsync'd, renamed and
// the directory fsync'd; only then is it in force and the older files deleted. Reads for
// FetchSnapshot come in chunks (position, maxBytes) of the data. Runs on the quorum driver's
// thread: open is synchronous (start-up), writes and reads go through libuv's pool.
// Invariants: a crash leaves the previous snapshot in force until the new one's rename is durable;
// `.part` files are removed at open; a damaged snapshot is refused with a QuorumStorageError and
// an older valid one used; at most one writer is open (a new one aborts the previous).
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c as crc32cUpdate } from '@node-rs/crc32';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { OffsetAndEpoch, Snapshot, SnapshotMeta } from '../../coordinator/raft/types.js';
import { fsyncDir, writeAllAt } from './durable_file.js';
import { QuorumStorageError } from './quorum_errors.js';
import {
  decodeSnapshot,
  encodeSnapshotHeader,
  parseSnapshotFileName,
  partFileName,
  PART_SUFFIX,
  snapshotFileName,
  snapshotHeaderBytes,
} from './snapshot_file.js';

export interface SnapshotChunk {
  readonly meta: SnapshotMeta;
  readonly position: number;
  readonly bytes: Uint8Array;
}

function sameId(a: OffsetAndEpoch, b: OffsetAndEpoch): boolean {
  return a.endOffset === b.endOffset && a.epoch === b.epoch;
}

/** Newest first: by end offset, then epoch. */
function newestFirst(a: OffsetAndEpoch, b: OffsetAndEpoch): number {
  return b.endOffset - a.endOffset || b.epoch - a.epoch;
}

export interface OpenedSnapshots {
  readonly store: SnapshotStore;
  /** The snapshot in force, with its data; null when there is none. */
  readonly latest: Snapshot | null;
  /** Newer snapshot files refused as damaged (left on disk until a newer snapshot replaces them). */
  readonly refused: readonly QuorumStorageError[];
}

/** The snapshot in force and where its data starts in its file (older files have shorter headers). */
interface InForce {
  readonly meta: SnapshotMeta;
  readonly dataOffset: number;
}

export class SnapshotStore {
  private current: InForce | null;
  private writing: SnapshotWriter | null = null;

  private constructor(
    readonly dir: string,
    current: InForce | null,
  ) {
    this.current = current;
  }

  /** Removes partial files, loads the newest valid snapshot. Synchronous. */
  static open(dir: string): OpenedSnapshots {
    const ids: OffsetAndEpoch[] = [];
    for (const name of readdirSync(dir)) {
      if (name.endsWith(PART_SUFFIX)) rmSync(join(dir, name), { force: true });
      const id = parseSnapshotFileName(name);
      if (id) ids.push(id);
    }
    const refused: QuorumStorageError[] = [];
    for (const id of ids.sort(newestFirst)) {
      const path = join(dir, snapshotFileName(id));
      const stored = decodeSnapshot(readFileSync(path), id);
      if (typeof stored !== 'string') {
        return { store: new SnapshotStore(dir, { meta: stored.snapshot.meta, dataOffset: stored.dataOffset }), latest: stored.snapshot, refused };
      }
      refused.push(new QuorumStorageError('corrupt-snapshot', `snapshot ${path} refused: ${stored}`));
    }
    return { store: new SnapshotStore(dir, null), latest: null, refused };
  }

  /** The snapshot in force. */
  get latest(): SnapshotMeta | null {
    return this.current?.meta ?? null;
  }

  /**
   * FetchSnapshot: up to `maxBytes` of the data of snapshot `id` from byte `position`. Throws
   * KafkaError SNAPSHOT_NOT_FOUND when `id` is not the snapshot in force, POSITION_OUT_OF_RANGE
   * when `position` is not inside its data.
   */
  async read(id: OffsetAndEpoch, position: number, maxBytes: number): Promise<SnapshotChunk> {
    const inForce = this.current;
    if (!inForce || !sameId(inForce.meta.id, id)) throw new KafkaError(ErrorCode.SNAPSHOT_NOT_FOUND, `no snapshot ${id.endOffset}-${id.epoch}`);
    const { meta, dataOffset } = inForce;
    if (!Number.isSafeInteger(position) || position < 0 || position > meta.size) {
      throw new KafkaError(ErrorCode.POSITION_OUT_OF_RANGE, `position ${position} outside snapshot of ${meta.size} bytes`);
    }
    const length = Math.max(0, Math.min(maxBytes, meta.size - position));
    const bytes = Buffer.alloc(length);
    // Opened per read: a snapshot replaced meanwhile stays readable through this descriptor.
    const handle = await open(join(this.dir, snapshotFileName(id)), 'r');
    try {
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(bytes, done, length - done, dataOffset + position + done);
        if (bytesRead === 0) throw new QuorumStorageError('corrupt-snapshot', `snapshot ${snapshotFileName(id)} ends early`);
        done += bytesRead;
      }
    } finally {
      await handle.close();
    }
    return { meta, position, bytes };
  }

  /**
   * A writer for a snapshot arriving in pieces; it aborts any writer still open. The snapshot is
   * in force once freeze() resolves.
   */
  async writer(meta: SnapshotMeta): Promise<SnapshotWriter> {
    if (!Number.isSafeInteger(meta.size) || meta.size < 0) throw new RangeError(`snapshot size ${meta.size}`);
    await this.writing?.abort();
    const path = join(this.dir, partFileName(meta.id));
    const handle = await open(path, 'w');
    const writer = new SnapshotWriter(this, meta, path, handle);
    this.writing = writer;
    return writer;
  }

  /** Writes a whole snapshot durably and puts it in force. */
  async save(snapshot: Snapshot): Promise<void> {
    const writer = await this.writer(snapshot.meta);
    try {
      await writer.append(0, snapshot.data);
      await writer.freeze();
    } catch (err) {
      await writer.abort();
      throw err;
    }
  }

  /** For SnapshotWriter: `meta`'s file is durable under its final name. */
  async installed(writer: SnapshotWriter, meta: SnapshotMeta): Promise<void> {
    if (this.writing === writer) this.writing = null;
    this.current = { meta, dataOffset: snapshotHeaderBytes(meta) };
    const keep = snapshotFileName(meta.id);
    let removed = false;
    for (const name of readdirSync(this.dir)) {
      if (name !== keep && parseSnapshotFileName(name)) {
        await unlink(join(this.dir, name));
        removed = true;
      }
    }
    if (removed) await fsyncDir(this.dir);
  }

  /** For SnapshotWriter: it closed without installing. */
  released(writer: SnapshotWriter): void {
    if (this.writing === writer) this.writing = null;
  }
}

/** Writes one snapshot's data in order, then freezes it into place. */
export class SnapshotWriter {
  private written = 0;
  private dataCrc = 0;
  private closed = false;
  private readonly headerBytes: number;

  constructor(
    private readonly store: SnapshotStore,
    readonly meta: SnapshotMeta,
    private readonly path: string,
    private readonly handle: FileHandle,
  ) {
    this.headerBytes = snapshotHeaderBytes(meta);
  }

  /** Bytes of data written so far: the position the next chunk must start at. */
  get position(): number {
    return this.written;
  }

  /** Appends the chunk at `position`; POSITION_OUT_OF_RANGE unless it continues the data and stays within its size. */
  async append(position: number, bytes: Uint8Array): Promise<void> {
    if (this.closed) throw new Error(`snapshot writer ${this.path} is closed`);
    if (position !== this.written || position + bytes.length > this.meta.size) {
      throw new KafkaError(ErrorCode.POSITION_OUT_OF_RANGE, `chunk [${position}, ${position + bytes.length}) of snapshot ${this.path}: ${this.written} of ${this.meta.size} bytes written`);
    }
    this.written += bytes.length;
    this.dataCrc = crc32cUpdate(bytes, this.dataCrc);
    await writeAllAt(this.handle, bytes, this.headerBytes + position);
  }

  /** Writes the header, fsyncs, renames into place, fsyncs the directory; the snapshot is then in force. */
  async freeze(): Promise<SnapshotMeta> {
    if (this.closed) throw new Error(`snapshot writer ${this.path} is closed`);
    if (this.written !== this.meta.size) throw new KafkaError(ErrorCode.POSITION_OUT_OF_RANGE, `snapshot ${this.path} has ${this.written} of ${this.meta.size} bytes`);
    this.closed = true;
    try {
      const header = encodeSnapshotHeader(this.meta, this.dataCrc);
      await writeAllAt(this.handle, header, 0);
      await this.handle.sync();
    } finally {
      await this.handle.close();
    }
    const dir = this.store.dir;
    await rename(this.path, join(dir, snapshotFileName(this.meta.id)));
    await fsyncDir(dir);
    await this.store.installed(this, this.meta);
    return this.meta;
  }

  /** Discards the partial file; nothing changes on disk that matters. */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.store.released(this);
    await this.handle.close();
    await unlink(this.path).catch(() => undefined);
  }
}
