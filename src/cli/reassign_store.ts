// Where reassignments keep their state (main thread of the CLI process): the one-partition topic
// `__sluice_reassignment`, so every `sluice reassign` command run against the cluster sees the same
// plan, the driver's status and the operator's commands, whichever machine it runs on. Records are
// JSON, keyed by kind: `plan` (what `plan` stored), `started` (the rollback snapshot and baseline
// `apply` took before anything moved), `status` (the driver's status, written on every change and
// at least every STATUS_EVERY_MS while it runs) and `command` (pause, resume, cancel, rollback,
// read by the running driver). The latest record of a kind is found by reading back from the end
// in growing windows, so a long history costs only when the record sought is old. A record over
// the topic's message size (a plan or rollback snapshot of more than ~40k moves) is written as
// numbered parts keyed `part:<id>:<index>:<count>`, each a slice of its JSON, in order; a reader
// joins a group once it has every part and places the record at its last part's offset. Other
// writers' records may fall between the parts; a group missing a part (a writer that died midway,
// or retention) is never joined.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, isStaleMetadataError } from '../client/cluster.js';
import type { KafkaAdmin } from '../client/admin.js';
import { Consumer } from '../client/consumer/consumer.js';
import { listOffsets } from '../client/consumer/offsets.js';
import { tpKey } from '../client/consumer/topic_partitions.js';
import { Producer } from '../client/producer/producer.js';
import type { Baseline, ExecutorStatus, RollbackSnapshot } from '../cluster/expansion/executor.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { StoredPlan } from './reassign_plan.js';

export const REASSIGN_TOPIC = '__sluice_reassignment';
/** A week of history: plans and snapshots older than that cannot be rolled back to anyway. */
const RETENTION_MS = 7 * 24 * 3600 * 1000;
export const STATUS_EVERY_MS = 2_000;
/** A driver whose last status is older than this is taken for gone. */
export const DRIVER_SILENT_MS = 15_000;
const FIRST_WINDOW = 64;
const LEADER_WAIT_MS = 15_000;
/** The topic's max.message.bytes (brokers with rings under 16 MiB keep their default). */
const TOPIC_MAX_MESSAGE_BYTES = 8 * 1024 ** 2;
/** A record larger than this is written in parts of at most this size (one part holds ~40k moves). */
const MAX_RECORD_BYTES = TOPIC_MAX_MESSAGE_BYTES - 64 * 1024;
/** Bound on one stored record, all parts together (a plan of ~5M moves). */
const MAX_WHOLE_BYTES = 1024 ** 3;
const PART_KEY = 'part:';
/** Bound on the parts of one record a reader collects (parts of the default size: 128 at most). */
const MAX_PARTS = 4096;
/** One read of a window gives up after this long without reaching its end. */
const READ_TIMEOUT_MS = 15_000;

export type ReassignCommand = 'pause' | 'resume' | 'cancel' | 'rollback';

/** What the driver publishes: the executor's status plus who drives it. */
export interface DriverStatus extends ExecutorStatus {
  readonly planId: string;
  readonly updatedAt: number;
  readonly driver: { readonly pid: number; readonly host: string };
  /** The latest log lines of the driver (bounded). */
  readonly log: readonly string[];
}

export type StoreRecord =
  | { readonly kind: 'plan'; readonly plan: StoredPlan }
  | { readonly kind: 'started'; readonly planId: string; readonly at: number; readonly snapshot: RollbackSnapshot; readonly baseline: Baseline }
  | { readonly kind: 'status'; readonly status: DriverStatus }
  | { readonly kind: 'command'; readonly planId: string; readonly command: ReassignCommand; readonly id: string; readonly at: number };

const TP = { topic: REASSIGN_TOPIC, partition: 0 } as const;

/** One message of the topic as read. */
interface Stored {
  readonly offset: number;
  readonly key: string | null;
  readonly value: Buffer | null;
}

/** The parts seen of one record written in parts. */
interface PartGroup {
  readonly slices: (Buffer | undefined)[];
  seen: number;
  /** Offset of the last part, once seen: where the whole record counts as written. */
  lastOffset: number;
}

export class ReassignStore {
  private producer: Producer | null = null;

  private constructor(private readonly brokers: string[], private readonly cluster: Cluster) {}

  /** Opens the store, creating its topic (replication factor up to 3) the first time. */
  static async open(admin: KafkaAdmin, brokers: string[]): Promise<ReassignStore> {
    const topics = await admin.listTopics();
    if (!topics.some((t) => t.name === REASSIGN_TOPIC)) {
      const live = (await admin.clusterMetadata()).brokers.length;
      const rf = Math.max(1, Math.min(3, live));
      const configs = { 'retention.ms': String(RETENTION_MS), 'cleanup.policy': 'delete' };
      const create = (extra: Record<string, string>): Promise<unknown> => admin.createTopics(REASSIGN_TOPIC, 1, rf, { ...configs, ...extra }).catch((err: unknown) => {
        if (!(err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) throw err;
      });
      await create({ 'max.message.bytes': String(TOPIC_MAX_MESSAGE_BYTES) }).catch((err: unknown) => {
        if (!(err instanceof KafkaError && err.code === ErrorCode.INVALID_CONFIG)) throw err;
        return create({});
      });
      // A topic just created has no leader for a moment; reading or writing it then would fail.
      for (const deadline = Date.now() + LEADER_WAIT_MS; ;) {
        const t = await admin.describeTopic(REASSIGN_TOPIC).catch(() => null);
        if (t !== null && t.partitionDetails.every((p) => p.leader >= 0)) break;
        if (Date.now() > deadline) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `${REASSIGN_TOPIC} has no leader ${LEADER_WAIT_MS} ms after it was created`);
        await sleep(100);
      }
    }
    return new ReassignStore(brokers, new Cluster({ brokers, clientId: 'sluice-reassign' }));
  }

  async append(record: StoreRecord, partBytes = MAX_RECORD_BYTES): Promise<void> {
    const value = Buffer.from(JSON.stringify(record));
    if (value.length > MAX_WHOLE_BYTES) throw new KafkaError(ErrorCode.MESSAGE_TOO_LARGE, `a ${record.kind} record of ${value.length} bytes is over ${MAX_WHOLE_BYTES}`);
    if (this.producer === null) {
      const producer = new Producer({ brokers: this.brokers, clientId: 'sluice-reassign', acks: 'all', maxRequestSize: MAX_RECORD_BYTES + 1024 * 1024 });
      await producer.connect();
      this.producer = producer;
    }
    if (value.length <= partBytes) {
      await this.producer.send(REASSIGN_TOPIC, { key: record.kind, value, partition: 0 });
      return;
    }
    const id = randomBytes(6).toString('hex');
    const count = Math.ceil(value.length / partBytes);
    // One at a time: each part acknowledged before the next, so the last part is written last.
    for (let index = 0; index < count; index++) {
      const slice = value.subarray(index * partBytes, (index + 1) * partBytes);
      await this.producer.send(REASSIGN_TOPIC, { key: `${PART_KEY}${id}:${index}:${count}`, value: slice, partition: 0 });
    }
  }

  /** The next offset to be written: where a driver starts reading commands. */
  end(): Promise<number> {
    return this.offset('latest');
  }

  /**
   * The partition's earliest or latest offset, asked of its leader. A leader that moved, or has
   * not opened the partition yet, answers with a stale-metadata error: the lookup is tried again
   * (the Cluster has refreshed its metadata by then), within LEADER_WAIT_MS.
   */
  private async offset(spec: 'earliest' | 'latest'): Promise<number> {
    for (const deadline = Date.now() + LEADER_WAIT_MS; ;) {
      try {
        return (await listOffsets(this.cluster, [TP], spec)).get(tpKey(TP.topic, TP.partition)) ?? 0;
      } catch (err) {
        if (!(err instanceof KafkaError && isStaleMetadataError(err.code)) || Date.now() > deadline) throw err;
        await sleep(100);
      }
    }
  }

  /** The latest record that `match` accepts, or null when the topic holds none. */
  async latest<R extends StoreRecord>(match: (r: StoreRecord) => r is R): Promise<R | null> {
    const [start, end] = await Promise.all([this.offset('earliest'), this.offset('latest')]);
    const groups = new Map<string, PartGroup>();
    let found = null as { readonly offset: number; readonly record: R } | null;
    let to = end;
    for (let window = FIRST_WINDOW; to > start; window *= 4) {
      const from = Math.max(start, to - window);
      for (const m of await this.read(from, to)) {
        const candidate = isPart(m) ? joinPart(groups, m) : { offset: m.offset, record: decode(m.value) };
        if (candidate !== null && match(candidate.record) && (found === null || candidate.offset > found.offset)) found = { offset: candidate.offset, record: candidate.record };
      }
      // A group whose last part is newer than what was found, still missing earlier parts, may
      // be the record sought: read on until it is whole or the log's start is reached.
      const after = found?.offset ?? -1;
      const pending = [...groups.values()].some((g) => g.lastOffset > after && g.seen < g.slices.length);
      if (found !== null && !pending) return found.record;
      to = from;
    }
    return found?.record ?? null;
  }

  /** Calls `onRecord` for each record from `from` on until `signal` aborts. */
  async follow(from: number, onRecord: (r: StoreRecord) => void, signal: AbortSignal): Promise<void> {
    const consumer = new Consumer({ brokers: this.brokers, clientId: 'sluice-reassign', maxWaitMs: 250 });
    try {
      await consumer.assign([{ ...TP, offset: from }]);
      while (!signal.aborted) {
        // Records written in parts are plans and snapshots, never what a follower waits for.
        for (const b of await consumer.poll({ signal })) for (const m of b.messages) if (!isPart(storedOf(m))) onRecord(decode(m.value));
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      await consumer.close();
    }
  }

  async close(): Promise<void> {
    await this.producer?.close();
    await this.cluster.close();
  }

  private async read(from: number, to: number): Promise<Stored[]> {
    const consumer = new Consumer({ brokers: this.brokers, clientId: 'sluice-reassign', maxWaitMs: 100 });
    const out: Stored[] = [];
    const deadline = Date.now() + READ_TIMEOUT_MS;
    try {
      await consumer.assign([{ ...TP, offset: from }]);
      for (let next = from; next < to;) {
        if (Date.now() > deadline) throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `reading ${REASSIGN_TOPIC} ${from}..${to} stopped at ${next}`);
        for (const b of await consumer.poll()) {
          for (const m of b.messages) {
            if (m.offset < to) out.push(storedOf(m));
            next = m.offset + 1;
          }
          // Offsets may have gaps (aborted or deleted records): the high watermark closes the window.
          if (b.messages.length === 0 && b.highWatermark >= to) next = to;
        }
        const position = consumer.position(TP);
        if (position !== null && position >= to) next = to;
      }
    } finally {
      await consumer.close();
    }
    return out;
  }
}

function storedOf(m: { offset: number; key: Buffer | null; value: Buffer | null }): Stored {
  return { offset: m.offset, key: m.key === null ? null : m.key.toString('utf8'), value: m.value };
}

function isPart(m: Stored): boolean {
  return m.key !== null && m.key.startsWith(PART_KEY);
}

/**
 * Adds part `m` to its group (parts may arrive in any order, windows being read newest first);
 * returns the whole record, placed at its last part's offset, when `m` completes the group.
 * Malformed part keys are taken for foreign records and skipped.
 */
function joinPart(groups: Map<string, PartGroup>, m: Stored): { offset: number; record: StoreRecord } | null {
  const [id, indexText, countText] = (m.key as string).slice(PART_KEY.length).split(':');
  const index = Number(indexText);
  const count = Number(countText);
  if (id === undefined || !Number.isSafeInteger(index) || !Number.isSafeInteger(count) || index < 0 || index >= count || m.value === null) return null;
  if (count > MAX_PARTS) return null;
  let g = groups.get(id);
  if (g === undefined) {
    g = { slices: new Array<Buffer | undefined>(count).fill(undefined), seen: 0, lastOffset: -1 };
    groups.set(id, g);
  }
  if (g.slices.length !== count || g.slices[index] !== undefined) return null;
  g.slices[index] = m.value;
  g.seen++;
  if (index === count - 1) g.lastOffset = m.offset;
  if (g.seen < count) return null;
  const whole = Buffer.concat(g.slices as Buffer[]);
  groups.delete(id);
  return { offset: g.lastOffset, record: decode(whole) };
}

function decode(value: Buffer | null): StoreRecord {
  if (value === null) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `a null record in ${REASSIGN_TOPIC}`);
  return JSON.parse(value.toString('utf8')) as StoreRecord;
}

export const isPlan = (r: StoreRecord): r is Extract<StoreRecord, { kind: 'plan' }> => r.kind === 'plan';
export const isStarted = (r: StoreRecord): r is Extract<StoreRecord, { kind: 'started' }> => r.kind === 'started';
export const isStatus = (r: StoreRecord): r is Extract<StoreRecord, { kind: 'status' }> => r.kind === 'status';

export function newCommandId(): string {
  return randomBytes(6).toString('hex');
}
