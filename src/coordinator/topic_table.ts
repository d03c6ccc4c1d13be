// Topic metadata of a single node: names, ids, partition counts and per-topic config overrides.
// Lives on the main thread (its only writer); persisted as one JSON document replaced atomically
// (write temp, fsync, rename, fsync dir) so a crash leaves either the old or the new table.
// The Raft metadata log replaces this file when clustering arrives; the shape (an image of
// topics keyed by id) is chosen so that it becomes that log's snapshot.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export interface TopicRecord {
  readonly name: string;
  readonly id: string; // 32 hex chars, never all zero
  partitions: number;
  readonly configs: Record<string, string>;
}

interface TableFile {
  version: 1;
  topics: TopicRecord[];
}

const TOPIC_NAME = /^[a-zA-Z0-9._-]+$/;
export const MAX_TOPIC_NAME_LENGTH = 249;
const ZERO_UUID = '0'.repeat(32);

/** Kafka's rules: 1-249 chars of [a-zA-Z0-9._-], not "." or "..". */
export function validateTopicName(name: string): void {
  if (name.length === 0 || name.length > MAX_TOPIC_NAME_LENGTH || name === '.' || name === '..' || !TOPIC_NAME.test(name)) {
    throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `invalid topic name '${name.slice(0, 300)}'`);
  }
}

function newTopicId(): string {
  for (;;) {
    const id = randomBytes(16).toString('hex');
    if (id !== ZERO_UUID) return id;
  }
}

export class TopicTable {
  private readonly byName = new Map<string, TopicRecord>();
  private readonly byId = new Map<string, TopicRecord>();
  private readonly file: string;
  private revisionValue = 0;
  /** The latest table write; each write waits for the one before. */
  private writing: Promise<void> = Promise.resolve();

  private constructor(private readonly metaDir: string) {
    this.file = join(metaDir, 'topics.json');
  }

  static load(dataDir: string): TopicTable {
    const metaDir = join(dataDir, 'meta');
    mkdirSync(metaDir, { recursive: true });
    const table = new TopicTable(metaDir);
    let text: string | null = null;
    try {
      text = readFileSync(table.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== null) {
      const parsed = JSON.parse(text) as TableFile;
      for (const t of parsed.topics) table.index({ name: t.name, id: t.id, partitions: t.partitions, configs: { ...t.configs } });
    }
    return table;
  }

  /** Bumped on every change; lets caches (metadata responses) know they are stale. */
  get revision(): number {
    return this.revisionValue;
  }

  get size(): number {
    return this.byName.size;
  }

  get(name: string): TopicRecord | undefined {
    return this.byName.get(name);
  }

  getById(id: string): TopicRecord | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<TopicRecord> {
    return this.byName.values();
  }

  /** Applies at once (later calls see the topic); resolves once the table is durable. */
  async create(name: string, partitions: number, configs: Record<string, string>): Promise<TopicRecord> {
    validateTopicName(name);
    if (this.byName.has(name)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `topic '${name}' already exists`);
    const record: TopicRecord = { name, id: newTopicId(), partitions, configs: { ...configs } };
    this.index(record);
    await this.persist();
    return record;
  }

  async setPartitionCount(name: string, partitions: number): Promise<void> {
    const t = this.byName.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    t.partitions = partitions;
    await this.persist();
  }

  async delete(name: string): Promise<TopicRecord> {
    const t = this.byName.get(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    this.byName.delete(name);
    this.byId.delete(t.id);
    await this.persist();
    return t;
  }

  private index(t: TopicRecord): void {
    this.byName.set(t.name, t);
    this.byId.set(t.id, t);
    this.revisionValue++;
  }

  /**
   * Writes the table as it is now, after any earlier write (so the file ends with the latest).
   * Off the main thread: an fsync there stops every connection for as long as the disk takes,
   * seconds when much page cache is dirty under `--flush never`.
   */
  private persist(): Promise<void> {
    this.revisionValue++;
    const body: TableFile = { version: 1, topics: [...this.byName.values()] };
    const text = JSON.stringify(body);
    const write = this.writing.then(() => this.writeFile(text));
    this.writing = write.catch(() => undefined);
    return write;
  }

  private async writeFile(text: string): Promise<void> {
    const tmp = `${this.file}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    const dir = await open(this.metaDir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
