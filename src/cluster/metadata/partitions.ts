// One topic's partitions in a metadata image, stored column-wise so a million partitions fit the
// heap budget (≤ 1 KiB each, bench/metadata_image.ts measures it): leaders and epochs in typed
// arrays, replica lists as shared references (the ISR is the replica list itself while they are
// equal, and every empty list is one shared array). A PartitionTable never changes once built;
// a delta copies the columns of the topics it touches into a PartitionTableBuilder. Pure; any
// thread. PartitionRecord objects are made on read.
import type { PartitionRecord } from '../cluster_view.js';

const EMPTY: readonly number[] = Object.freeze([]);

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A replica list as the table stores it: the shared empty list, or `like` itself when equal. */
function share(ids: readonly number[], like: readonly number[]): readonly number[] {
  if (ids.length === 0) return EMPTY;
  return sameIds(ids, like) ? like : ids;
}

/** The fields of one partition as PartitionRecord and PartitionChange carry them. */
export interface PartitionState {
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly removingReplicas: readonly number[];
  readonly addingReplicas: readonly number[];
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
}

interface Columns {
  leaders: Int32Array;
  leaderEpochs: Int32Array;
  partitionEpochs: Int32Array;
  replicas: (readonly number[])[];
  isr: (readonly number[])[];
  removing: (readonly number[])[];
  adding: (readonly number[])[];
}

function stateOf(c: Readonly<Columns>, p: number): PartitionState {
  return {
    replicas: c.replicas[p]!, isr: c.isr[p]!, removingReplicas: c.removing[p]!, addingReplicas: c.adding[p]!,
    leader: c.leaders[p]!, leaderEpoch: c.leaderEpochs[p]!, partitionEpoch: c.partitionEpochs[p]!,
  };
}

export class PartitionTable {
  static readonly EMPTY = new PartitionTable(0, {
    leaders: new Int32Array(0), leaderEpochs: new Int32Array(0), partitionEpochs: new Int32Array(0),
    replicas: [], isr: [], removing: [], adding: [],
  });

  /** Built only by PartitionTableBuilder.build(), which hands its columns over. */
  constructor(
    readonly count: number,
    private readonly c: Readonly<Columns>,
  ) {}

  /** Partitions by replica broker, built by hosting() on first use. */
  private byReplica: Map<number, Int32Array> | null = null;

  leader(p: number): number {
    return this.c.leaders[p]!;
  }

  leaderEpoch(p: number): number {
    return this.c.leaderEpochs[p]!;
  }

  replicas(p: number): readonly number[] {
    return this.c.replicas[p]!;
  }

  isr(p: number): readonly number[] {
    return this.c.isr[p]!;
  }

  state(p: number): PartitionState {
    return stateOf(this.c, p);
  }

  /** The partition as the cluster view hands it out; undefined outside 0 .. count-1. */
  record(topicId: string, p: number): PartitionRecord | undefined {
    if (!Number.isInteger(p) || p < 0 || p >= this.count) return undefined;
    return { topicId, partition: p, ...this.state(p) };
  }

  /**
   * The partitions whose replica list holds `brokerId`, ascending: every partition the broker can
   * lead or be in the ISR of, since leader and ISR are drawn from the replicas. The index is built
   * on first use and kept with the table (which never changes), so the controller's elections on
   * fencing and unfencing cost the broker's partitions, not the cluster's, except for the topics
   * whose table a batch rebuilt since.
   */
  hosting(brokerId: number): Int32Array {
    if (this.byReplica === null) this.byReplica = indexReplicas(this.c.replicas, this.count);
    return this.byReplica.get(brokerId) ?? NO_PARTITIONS;
  }

  builder(): PartitionTableBuilder {
    return new PartitionTableBuilder(this.count, this.c);
  }
}

/** A table being changed by one delta: columns copied once, grown by doubling, trimmed on build. */
export class PartitionTableBuilder {
  private c: Columns;
  private n: number;

  constructor(count: number, from: Readonly<Columns>) {
    const cap = Math.max(count, 4);
    this.n = count;
    this.c = {
      leaders: grownInt(from.leaders, cap), leaderEpochs: grownInt(from.leaderEpochs, cap), partitionEpochs: grownInt(from.partitionEpochs, cap),
      replicas: from.replicas.slice(0, count), isr: from.isr.slice(0, count), removing: from.removing.slice(0, count), adding: from.adding.slice(0, count),
    };
  }

  get count(): number {
    return this.n;
  }

  state(p: number): PartitionState {
    return stateOf(this.c, p);
  }

  /** Sets partition `p`, which is an existing one or the next one (count grows by one). */
  set(p: number, s: PartitionState): void {
    if (p === this.n) {
      if (p === this.c.leaders.length) this.grow(p * 2);
      this.n++;
    }
    const c = this.c;
    const replicas = share(s.replicas, p < c.replicas.length ? c.replicas[p]! : EMPTY);
    c.replicas[p] = replicas;
    c.isr[p] = share(s.isr, replicas);
    c.removing[p] = share(s.removingReplicas, EMPTY);
    c.adding[p] = share(s.addingReplicas, EMPTY);
    c.leaders[p] = s.leader;
    c.leaderEpochs[p] = s.leaderEpoch;
    c.partitionEpochs[p] = s.partitionEpoch;
  }

  private grow(cap: number): void {
    const c = this.c;
    c.leaders = grownInt(c.leaders, cap);
    c.leaderEpochs = grownInt(c.leaderEpochs, cap);
    c.partitionEpochs = grownInt(c.partitionEpochs, cap);
  }

  build(): PartitionTable {
    const c = this.c;
    const n = this.n;
    return new PartitionTable(n, {
      leaders: c.leaders.length === n ? c.leaders : c.leaders.slice(0, n),
      leaderEpochs: c.leaderEpochs.length === n ? c.leaderEpochs : c.leaderEpochs.slice(0, n),
      partitionEpochs: c.partitionEpochs.length === n ? c.partitionEpochs : c.partitionEpochs.slice(0, n),
      replicas: c.replicas, isr: c.isr, removing: c.removing, adding: c.adding,
    });
  }
}

const NO_PARTITIONS = new Int32Array(0);

function indexReplicas(replicas: readonly (readonly number[])[], count: number): Map<number, Int32Array> {
  const lists = new Map<number, number[]>();
  for (let p = 0; p < count; p++) {
    for (const id of replicas[p]!) {
      let l = lists.get(id);
      if (l === undefined) lists.set(id, (l = []));
      l.push(p);
    }
  }
  return new Map([...lists].map(([id, ps]) => [id, Int32Array.from(ps)]));
}

function grownInt(a: Int32Array, cap: number): Int32Array {
  const out = new Int32Array(Math.max(cap, a.length));
  out.set(a);
  return out;
}
