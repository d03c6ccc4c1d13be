// Test helper: the checker of a Jepsen-style queue run (replication fault suite). Producers send
// unique values `p<producer>-<seq>`, seq counting up from 0 per producer; the checker takes what
// they saw acknowledged (value, partition, offset), how many values each producer attempted,
// everything the group's consumers read, a final read of every partition after the cluster healed,
// and each replica's own log (read from its data dir) up to the leader's high watermark. It counts:
// - lost: acknowledged, absent from the final read;
// - misplaced: acknowledged at a (partition, offset) that holds something else in the final read,
//   while the value sits elsewhere (a re-append the acknowledgement does not describe);
// - duplicated: one value at two offsets of the final read (0 with idempotence);
// - reordered: per producer per partition, a record after one of that producer with a higher seq,
//   each described by partition, producer, both values with their offsets and, where the read
//   knows the batches, the idempotent producer id/epoch, record sequence and leader epoch of each;
// - unexpected: read (by the group or finally) but never attempted by any producer;
// - vanished: read by the group at an offset the final read shows empty or holding another value
//   (a consumer saw data past the high watermark that was later truncated);
// - replica mismatches: a replica whose records below the high watermark differ from the final
//   read through the leader (missing, extra or different records); each is reported at the first
//   offset where they part, with what every replica holds there (value, batch leader epoch,
//   producer id and sequence) and where each replica's epochs start, which is what tells a tail
//   left untruncated from a record appended in the wrong place.
// Sends that were never acknowledged are indeterminate: present or absent, both are fine.
// Pure; runs on the test's main thread; memory linear in the history.

/**
 * A send its producer saw acknowledged. Partition and offset are null for a client whose
 * acknowledgements do not say where the record landed (kcat reports only failures): such an ack is
 * judged lost or not, never misplaced.
 */
export interface QueueAck {
  readonly value: string;
  readonly partition: number | null;
  readonly offset: number | null;
}

/** A record as read: by a group consumer, the final reader, or from a replica's segment files. */
export interface QueueRead {
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
  /** Where the read saw its batch: who wrote it, under which leader, at which record sequence. */
  readonly batch?: RecordOrigin;
}

/** A record's place in its idempotent producer's stream, from its batch header. */
export interface RecordOrigin {
  readonly producerId: number;
  readonly producerEpoch: number;
  /** The batch's base sequence plus the record's offset delta (-1 for a non-idempotent batch). */
  readonly sequence: number;
  /** The batch's partitionLeaderEpoch: the leader epoch it was appended in. */
  readonly leaderEpoch: number;
}

/** One partition's replicas after heal: the leader's high watermark and each replica's records. */
export interface ReplicaLogs {
  readonly partition: number;
  readonly highWatermark: number;
  /** Broker id -> that replica's records in offset order (any beyond the high watermark are ignored). */
  readonly logs: ReadonlyMap<number, readonly QueueRead[]>;
}

export interface QueueHistory {
  readonly acked: readonly QueueAck[];
  /** Values attempted per producer: producer k sent `p<k>-0` .. `p<k>-<attempted[k]-1>`. */
  readonly attempted: readonly number[];
  /** Everything the group's consumers read, each partition in the order read. */
  readonly consumed: readonly QueueRead[];
  /** The final read of every partition from offset 0 to its high watermark, in offset order. */
  readonly final: readonly QueueRead[];
  readonly replicas: readonly ReplicaLogs[];
}

export interface QueueReport {
  readonly acked: number;
  readonly attempted: number;
  readonly finalRead: number;
  /** Acknowledged values absent from the final read (all of them, sorted). */
  readonly lost: readonly string[];
  readonly misplaced: number;
  readonly duplicated: number;
  /** One line per record of a producer found after a later one of the same producer in its partition. */
  readonly reordered: readonly string[];
  readonly unexpected: number;
  readonly vanished: number;
  /** One line per (partition, replica) that disagrees with the leader's records. */
  readonly replicaMismatches: readonly string[];
}

/** Kinds of anomaly in a QueueReport; every one is 0 in a correct run. */
export const ANOMALY_KINDS = ['lost', 'misplaced', 'duplicated', 'reordered', 'unexpected', 'vanished', 'replicaMismatches'] as const;
export type AnomalyKind = (typeof ANOMALY_KINDS)[number];

export function queueValue(producer: number, seq: number): string {
  return `p${producer}-${seq}`;
}

/** {producer, seq} of a workload value, or null for anything else. */
export function parseQueueValue(value: string): { producer: number; seq: number } | null {
  const m = /^p(\d{1,6})-(\d{1,9})$/.exec(value);
  return m === null ? null : { producer: Number(m[1]), seq: Number(m[2]) };
}

export function anomalyCount(r: QueueReport, kind: AnomalyKind): number {
  const v = r[kind];
  return typeof v === 'number' ? v : v.length;
}

export function totalAnomalies(r: QueueReport): number {
  return ANOMALY_KINDS.reduce((sum, k) => sum + anomalyCount(r, k), 0);
}

const slot = (partition: number, offset: number): string => `${partition}@${offset}`;

/** Epoch starts shown per replica in a mismatch line. */
const MAX_EPOCHS_SHOWN = 8;

export function checkQueue(h: QueueHistory): QueueReport {
  const wasSent = (value: string): boolean => {
    const v = parseQueueValue(value);
    return v !== null && v.seq < (h.attempted[v.producer] ?? 0);
  };
  const finalAt = new Map<string, string>();
  const finalSlots = new Map<string, string>();
  let duplicated = 0;
  let unexpected = 0;
  for (const r of h.final) {
    finalAt.set(slot(r.partition, r.offset), r.value);
    if (finalSlots.has(r.value)) duplicated++;
    else finalSlots.set(r.value, slot(r.partition, r.offset));
    if (!wasSent(r.value)) unexpected++;
  }
  const lost: string[] = [];
  let misplaced = 0;
  for (const a of h.acked) {
    const at = finalSlots.get(a.value);
    if (at === undefined) lost.push(a.value);
    else if (a.partition !== null && a.offset !== null && at !== slot(a.partition, a.offset) && finalAt.get(slot(a.partition, a.offset)) !== a.value) misplaced++;
  }
  let vanished = 0;
  for (const r of h.consumed) {
    if (!wasSent(r.value)) unexpected++;
    else if (finalAt.get(slot(r.partition, r.offset)) !== r.value) vanished++;
  }
  return {
    acked: h.acked.length,
    attempted: h.attempted.reduce((a, b) => a + b, 0),
    finalRead: h.final.length,
    lost: lost.sort(),
    misplaced,
    duplicated,
    reordered: findReordered(h.final),
    unexpected,
    vanished,
    replicaMismatches: h.replicas.flatMap((p) => replicaMismatches(p, h.final.filter((r) => r.partition === p.partition && r.offset < p.highWatermark))),
  };
}

/**
 * Per (partition, producer): records whose seq is below a seq that producer had earlier in that
 * partition, each named with the earlier record holding the highest seq so far.
 */
function findReordered(final: readonly QueueRead[]): string[] {
  const highest = new Map<string, { seq: number; read: QueueRead }>();
  const seen = new Set<string>();
  const out: string[] = [];
  for (const r of final) {
    const v = parseQueueValue(r.value);
    // A second copy is a duplicate, counted once as such and not again as out of order.
    if (v === null || seen.has(r.value)) continue;
    seen.add(r.value);
    const key = `${r.partition}/${v.producer}`;
    const top = highest.get(key);
    if (top !== undefined && v.seq < top.seq) out.push(`partition ${r.partition} producer p${v.producer}: ${describeRead(r)} after ${describeRead(top.read)}`);
    else highest.set(key, { seq: v.seq, read: r });
  }
  return out;
}

function describeRead(r: QueueRead): string {
  const b = r.batch;
  return `${r.value}@${r.offset}${b === undefined ? '' : ` (pid ${b.producerId} epoch ${b.producerEpoch} seq ${b.sequence}, leader epoch ${b.leaderEpoch})`}`;
}

/**
 * Each replica's records below the high watermark against the final read through the leader
 * (`reference`, offset order): the same offsets 0..hw-1, each with the same value. A replica that
 * disagrees gets one line naming the first offset where it parts from the reference and what
 * every replica and the reference hold there.
 */
function replicaMismatches(p: ReplicaLogs, reference: readonly QueueRead[]): string[] {
  const brokers = [...p.logs].sort((a, b) => a[0] - b[0]).map(([broker, log]) => ({ broker, below: log.filter((r) => r.offset < p.highWatermark) }));
  const out: string[] = [];
  for (const { broker, below } of brokers) {
    const offset = firstDifference(below, reference);
    if (offset === null) continue;
    const there = brokers.map((b) => `broker ${b.broker} ${describeAt(b.below, offset)}`).join(', ');
    const epochs = brokers.map((b) => `broker ${b.broker} [${epochStarts(b.below)}] ends ${endOf(b.below)}`).join(', ');
    out.push(`partition ${p.partition} broker ${broker}: parts from the leader's read at offset ${offset} (high watermark ${p.highWatermark}); there the leader's read has `
      + `${reference.find((r) => r.offset === offset)?.value ?? 'nothing'}, ${there}; epochs (epoch@start offset): ${epochs}`);
  }
  return out;
}

/** The first offset where `log` and `reference` (both in offset order) hold different records, or null when they agree. */
function firstDifference(log: readonly QueueRead[], reference: readonly QueueRead[]): number | null {
  for (let i = 0; i < Math.max(log.length, reference.length); i++) {
    const mine = log[i];
    const theirs = reference[i];
    if (mine?.offset === theirs?.offset && mine?.value === theirs?.value) continue;
    return Math.min(mine?.offset ?? Infinity, theirs?.offset ?? Infinity);
  }
  return null;
}

/** The record of `log` at `offset` with its origin, or 'nothing'. */
function describeAt(log: readonly QueueRead[], offset: number): string {
  const r = log.find((x) => x.offset === offset);
  if (r === undefined) return 'nothing';
  const o = r.batch;
  return o === undefined ? r.value : `${r.value} (epoch ${o.leaderEpoch}, producer ${o.producerId}, seq ${o.sequence})`;
}

/** Where each batch leader epoch starts in `log`, as `epoch@offset`; the last few when there are many. */
function epochStarts(log: readonly QueueRead[]): string {
  const starts: string[] = [];
  let epoch: number | undefined;
  for (const r of log) {
    const e = r.batch?.leaderEpoch;
    if (e === undefined || e === epoch) continue;
    epoch = e;
    starts.push(`${e}@${r.offset}`);
  }
  return (starts.length > MAX_EPOCHS_SHOWN ? ['...', ...starts.slice(-MAX_EPOCHS_SHOWN)] : starts).join(' ');
}

/** The offset after the last record of `log` (0 when empty). */
function endOf(log: readonly QueueRead[]): number {
  return (log[log.length - 1]?.offset ?? -1) + 1;
}

/** Counts on one line, with the first lost values, reorders and replica mismatches. */
export function describeQueue(r: QueueReport): string {
  const head = (xs: readonly string[], n: number): string => xs.slice(0, n).join(', ') + (xs.length > n ? `, ... (${xs.length})` : '');
  return `attempted=${r.attempted} acked=${r.acked} finalRead=${r.finalRead} lost=${r.lost.length}${r.lost.length > 0 ? ` [${head(r.lost, 5)}]` : ''}`
    + ` misplaced=${r.misplaced} duplicated=${r.duplicated} reordered=${r.reordered.length}${r.reordered.length > 0 ? ` [${head(r.reordered, 3)}]` : ''} unexpected=${r.unexpected} vanished=${r.vanished}`
    + ` replicaMismatches=${r.replicaMismatches.length}${r.replicaMismatches.length > 0 ? ` [${head(r.replicaMismatches, 3)}]` : ''}`;
}
