// The coordinator's appends whose durability is not yet known, in emission order. The driver may
// report outcomes in any order, but they take effect strictly in emission order, so the
// in-memory offsets always equal a replay of the records that became durable (the driver appends
// records in effect order). Runs inside the pure coordinator. Invariants: tokens strictly
// increase; an entry leaves only after every earlier entry left; a deferred reply rides on the
// newest entry present when it was deferred; `offsets` indexes exactly the offset records of
// the entries still pending.
import type { GroupRecord, GroupReply } from './group_api.js';
import type { AppendCompletion } from './group_sink.js';
import { offsetKey } from './offset_store.js';

/** A reply that must not overtake appends emitted before it (it may describe their effects). */
export interface DeferredReply {
  readonly ref: number;
  readonly ok: GroupReply;
  readonly failed: GroupReply;
}

export interface InFlightOffset {
  readonly topic: string;
  readonly partition: number;
  appends: number;
}

const NONE_IN_FLIGHT: ReadonlyMap<string, InFlightOffset> = new Map();

export interface PendingAppend {
  readonly token: number;
  readonly records: readonly GroupRecord[];
  readonly done: AppendCompletion;
  /** null until the driver reports the outcome. */
  ok: boolean | null;
  deferred: DeferredReply[] | null;
}

export class AppendQueue {
  private nextToken = 1;
  private readonly pending = new Map<number, PendingAppend>();
  private deferredCount = 0;
  /** Per group, the partitions pending appends write (with how many appends write each). */
  private readonly offsets = new Map<string, Map<string, InFlightOffset>>();

  get size(): number {
    return this.pending.size;
  }

  /** Appends plus replies waiting on them: what calls have queued here. */
  get backlog(): number {
    return this.pending.size + this.deferredCount;
  }

  add(records: readonly GroupRecord[], done: AppendCompletion): number {
    const token = this.nextToken++;
    this.pending.set(token, { token, records, done, ok: null, deferred: null });
    this.track(records, 1);
    return token;
  }

  /** Parks a reply behind the newest pending append; false when nothing is pending (answer now). */
  defer(reply: DeferredReply): boolean {
    let last: PendingAppend | undefined;
    for (const p of this.pending.values()) last = p;
    if (last === undefined) return false;
    (last.deferred ??= []).push(reply);
    this.deferredCount++;
    return true;
  }

  /** Records an outcome; returns the entries that can now take effect, in emission order. */
  settle(token: number, ok: boolean): PendingAppend[] {
    const entry = this.pending.get(token);
    if (entry === undefined || entry.ok !== null) return [];
    entry.ok = ok;
    const ready: PendingAppend[] = [];
    for (const p of this.pending.values()) {
      if (p.ok === null) break;
      ready.push(p);
      this.pending.delete(p.token);
      this.deferredCount -= p.deferred?.length ?? 0;
      this.track(p.records, -1);
    }
    return ready;
  }

  /** Partitions of this group that pending appends will write, keyed by offsetKey. */
  offsetsInFlight(groupId: string): ReadonlyMap<string, InFlightOffset> {
    return this.offsets.get(groupId) ?? NONE_IN_FLIGHT;
  }

  private track(records: readonly GroupRecord[], by: 1 | -1): void {
    for (const r of records) {
      if (r.kind !== 'offset') continue;
      let group = this.offsets.get(r.groupId);
      if (group === undefined) this.offsets.set(r.groupId, (group = new Map()));
      const key = offsetKey(r.topic, r.partition);
      const entry = group.get(key) ?? { topic: r.topic, partition: r.partition, appends: 0 };
      entry.appends += by;
      if (entry.appends > 0) group.set(key, entry);
      else group.delete(key);
      if (group.size === 0) this.offsets.delete(r.groupId);
    }
  }
}
