// What an older Sluice single node kept in `<data-dir>/meta` before it ran a metadata quorum: the
// topic table (`topics.json`: names, ids, partition counts, config overrides) and the producer-id
// high mark (`producer_id_block`: the end of the last block handed out). Read once, when a single
// node first starts its metadata log on such a data dir, to be written into the log as ordinary
// records; `topics.json` is then renamed so the carry happens once. Main thread, at start-up.
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { LegacyTopic } from '../cluster/metadata/controller.js';

export interface LegacyMeta {
  readonly topics: readonly LegacyTopic[];
  readonly nextProducerId: number;
}

const TOPICS_FILE = 'topics.json';
const PRODUCER_ID_FILE = 'producer_id_block';
/** Bound on the topics read from the old table (the controller bounds their partitions). */
const MAX_LEGACY_TOPICS = 1_000_000;

function readOptional(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}

/** One entry of the old table, checked for shape (the controller checks names, ids and counts). */
function legacyTopic(v: unknown, file: string): LegacyTopic {
  const t = v as Partial<Record<keyof LegacyTopic, unknown>> | null;
  if (t === null || typeof t !== 'object' || typeof t.name !== 'string' || typeof t.id !== 'string' || typeof t.partitions !== 'number' || !isStringRecord(t.configs)) {
    throw new Error(`${file}: a topic entry is not {name, id, partitions, configs}`);
  }
  return { name: t.name, id: t.id, partitions: t.partitions, configs: { ...t.configs } };
}

/** The old table and high mark, or null when the data dir has no `topics.json` (new, or carried already). */
export function readLegacyMeta(metaDir: string): LegacyMeta | null {
  const file = join(metaDir, TOPICS_FILE);
  const text = readOptional(file);
  if (text === null) return null;
  let parsed: { version?: unknown; topics?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
  if (parsed === null || parsed.version !== 1 || !Array.isArray(parsed.topics) || parsed.topics.length > MAX_LEGACY_TOPICS) {
    throw new Error(`${file}: not a version 1 topic table of at most ${MAX_LEGACY_TOPICS} topics`);
  }
  const topics = parsed.topics.map((t) => legacyTopic(t, file));
  // The old allocator read a missing or unreadable mark as 0.
  const mark = Number(readOptional(join(metaDir, PRODUCER_ID_FILE))?.trim() ?? 0) || 0;
  return { topics, nextProducerId: mark };
}

/** The old table is in the metadata log: it is kept beside, under a name nothing reads. */
export function markLegacyMetaCarried(metaDir: string): void {
  renameSync(join(metaDir, TOPICS_FILE), join(metaDir, `${TOPICS_FILE}.migrated`));
}
