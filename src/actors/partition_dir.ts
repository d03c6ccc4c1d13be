// A partition's directory and the topic id that owns it. The directory is named
// `<topic>-<partition>` and holds a `partition.metadata` file naming the topic id (Kafka's
// layout), so a topic deleted and recreated under the same name can never be served the old
// topic's data: a directory whose file names another id is left over from an earlier topic
// whose deletion did not finish, and is removed before the partition opens.
// Main thread, asynchronous (libuv's pool), before the owning shard opens the log there.
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

export const PARTITION_METADATA = 'partition.metadata';

export function partitionDirName(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

function metadataText(topicId: string): string {
  return `version: 0\ntopic_id: ${topicId}\n`;
}

/** The topic id a metadata file names, or null when the text has none. */
export function parseTopicId(text: string): string | null {
  return /^topic_id: ([0-9a-f]{32})$/m.exec(text)?.[1] ?? null;
}

async function readTopicId(dir: string): Promise<string | null | 'missing'> {
  try {
    return parseTopicId(await readFile(join(dir, PARTITION_METADATA), 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
}

async function dirExists(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Replaced whole (temp, fsync, rename, fsync dir): a torn file would read as another topic's and cost the data. */
async function writeMetadata(dir: string, topicId: string): Promise<void> {
  const file = join(dir, PARTITION_METADATA);
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(metadataText(topicId));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

export type DirOutcome = 'created' | 'adopted' | 'matched' | 'replaced';

/**
 * Makes `dir` the partition directory of topic `topicId`. A directory without the metadata file
 * (written before topic ids were recorded) is adopted and the file added; one naming another
 * topic id (or an unreadable one) is moved aside and deleted, and a fresh one made.
 */
export async function preparePartitionDir(dir: string, topicId: string): Promise<DirOutcome> {
  const found = await readTopicId(dir);
  if (found === topicId) return 'matched';
  let outcome: DirOutcome = 'created';
  if (found === 'missing') {
    if (await dirExists(dir)) outcome = 'adopted';
  } else {
    // Renamed first, so a crash during the (possibly long) removal never leaves a half-deleted
    // directory under the partition's name.
    const aside = `${dir}.${found ?? 'unknown'}-delete`;
    await rm(aside, { recursive: true, force: true });
    await rename(dir, aside);
    await rm(aside, { recursive: true, force: true });
    outcome = 'replaced';
  }
  await mkdir(dir, { recursive: true });
  await writeMetadata(dir, topicId);
  return outcome;
}
