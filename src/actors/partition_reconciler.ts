// The back end of topic changes: makes what is open on the shards follow the cluster view.
// Each pass closes (and deletes the data of) partitions whose topic left the view or was
// replaced by a new topic of the same name, and single replicas the view no longer places on
// this broker (a reassignment moved them away), and opens every partition the view places on this
// broker that is not open yet: directory checked against the topic id, actor opened on the
// least-loaded shard, told its replication role, and only then routable (ShardTable.publish).
// Every pass also tells the shards the registered brokers when they changed, and each open
// replica its role (leader, follower of whom and whether its catch-up is throttled, leaderless)
// when the image changed it, and each shard its share of this broker's follower replication
// throttle (KIP-73) when the image changed that. Passes run one at a time; a change made during
// a pass gets another. Main thread.
import { join } from 'node:path';
import type { ClusterView, PartitionRecord, TopicImage } from '../cluster/cluster_view.js';
import type { ReconcileWaiter } from '../cluster/topic_admin.js';
import type { BrokerConfig } from '../config.js';
import { effective, toLogConfig } from '../coordinator/topic_configs.js';
import { FOLLOWER_THROTTLED_RATE, throttleRate } from '../coordinator/broker_configs.js';
import { ThrottledReplicaCache } from '../coordinator/replication/throttled_replicas.js';
import type { PartitionRole, ReplicaBrokerInfo } from '../coordinator/replication/types.js';
import { CleanShutdownEntries, type CleanCloseEntry } from '../log/clean_shutdown.js';
import type { LogConfig } from '../log/log_config.js';
import { partitionDirName, preparePartitionDir } from './partition_dir.js';
import type { ShardTable } from './shard_table.js';

/** Which open partition serves a topic-partition here: its handle, or -1 when none is open. */
export interface PartitionLookup {
  handleOf(topic: string, partition: number): number;
}

/** The control calls the reconciler makes on the shard that hosts (or will host) a partition. */
export interface PartitionControl {
  openPartition(handle: number, topic: string, partition: number, dir: string, config: LogConfig, cleanShutdown: CleanCloseEntry | null): Promise<void>;
  closePartition(handle: number, deleteData: boolean): Promise<void>;
  setBrokers(localBrokerId: number, brokers: ReplicaBrokerInfo[]): Promise<void>;
  setRoles(updates: { handle: number; role: PartitionRole }[]): Promise<void>;
  /** The shard's share of the follower replication throttle, bytes/s (Infinity: unthrottled). */
  setFollowerThrottle(bytesPerSecond: number): Promise<void>;
}

/**
 * What the image makes this broker of its replica of `record`; `listedThrottled`: the topic's
 * follower.replication.throttled.replicas names this replica (it is throttled only out of the ISR).
 */
export function roleOf(localId: number, record: PartitionRecord, minInsyncReplicas: number, listedThrottled: boolean): PartitionRole {
  const { topicId, leader, leaderEpoch } = record;
  if (leader === localId) {
    return { kind: 'leader', topicId, leaderEpoch, partitionEpoch: record.partitionEpoch, replicas: record.replicas, isr: record.isr, minInsyncReplicas };
  }
  if (leader < 0) return { kind: 'leaderless', topicId, leaderEpoch };
  return { kind: 'follower', topicId, leaderId: leader, leaderEpoch, throttled: listedThrottled && !record.isr.includes(localId) };
}

/**
 * What a replica's role is made of, for change detection without building the role: the image
 * bumps the partition epoch on every change of replicas, ISR or leader, and a handle never
 * outlives its topic id, so the same key means nothing to tell the shard.
 */
function roleKey(record: PartitionRecord, minInsyncReplicas: number, listedThrottled: boolean): string {
  return `${record.partitionEpoch}/${record.leaderEpoch}/${record.leader}/${minInsyncReplicas}/${listedThrottled}`;
}

interface Waiter {
  readonly revision: number;
  resolve(): void;
  reject(err: unknown): void;
}

export class PartitionReconciler implements ReconcileWaiter, PartitionLookup {
  /** Topic name -> id of the topic whose partitions are open under that name. */
  private readonly opened = new Map<string, string>();
  private appliedRevision = -1;
  /** One per caller awaiting a change; callers are requests, bounded by the connection limits. */
  private waiters: Waiter[] = [];
  private running: Promise<void> | null = null;
  private dirty = false;
  /** Handle -> the role key the hosting shard was last told. */
  private readonly toldRoles = new Map<number, string>();
  private toldBrokers = '';
  /** The follower throttle share the shards were last told; NaN before the first. */
  private toldThrottle = NaN;
  private readonly followerLists = new ThrottledReplicaCache('follower.replication.throttled.replicas');
  /** Called after a pass that opened or closed anything (group coordinators follow topics). */
  onChange: () => void = () => {};
  /** Called once a shard has been told a replica leads here (with the other replicas' ids), or no longer does (null). */
  onLeadership: (handle: number, followers: readonly number[] | null) => void = () => {};
  /** Handles whose shards were last told they lead. */
  private readonly leading = new Set<number>();

  constructor(
    private readonly config: BrokerConfig,
    private readonly view: ClusterView,
    private readonly shards: ShardTable,
    private readonly controlOf: (shard: number) => PartitionControl,
    private readonly onDirRemoved: (dir: string) => void,
    /** The clean-shutdown entries found at start, for the first pass's opens. */
    private readonly cleanShutdown: CleanShutdownEntries = CleanShutdownEntries.none(),
    /** Where followers reach leaders: the view of the inter-broker listener. */
    private readonly leaderEndpoints: Pick<ClusterView, 'replicaBrokers'> = view,
  ) {}

  partitionDir(topic: string, partition: number): string {
    return join(this.config.dataDir, partitionDirName(topic, partition));
  }

  handleOf(topic: string, partition: number): number {
    return this.shards.handleOf(topic, partition);
  }

  /** The latest view revision whose partitions were all opened (or closed): -1 before the first pass. */
  get settledRevision(): number {
    return this.appliedRevision;
  }

  applied(revision: number): Promise<void> {
    if (revision <= this.appliedRevision) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ revision, resolve, reject }));
    this.dirty = true;
    this.running ??= this.run();
    return done;
  }

  private async run(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      const revision = this.view.revision;
      let failure: { err: unknown } | null = null;
      try {
        if (await this.pass()) this.onChange();
        this.appliedRevision = Math.max(this.appliedRevision, revision);
      } catch (err) {
        failure = { err };
      }
      const settled = this.waiters.filter((w) => w.revision <= revision);
      this.waiters = this.waiters.filter((w) => w.revision > revision);
      for (const w of settled) {
        if (failure === null) w.resolve();
        else w.reject(failure.err);
      }
    }
    this.running = null;
  }

  /** One reconciliation; true when anything was opened or closed. Rejects with the first failed open. */
  private async pass(): Promise<boolean> {
    const stale = [...this.opened].filter(([name, id]) => this.view.topic(name)?.id !== id).map(([name]) => name);
    await Promise.all(stale.map((name) => this.closeTopic(name)));
    const dropped = await this.closeDroppedReplicas();
    await this.tellBrokers();
    await this.tellFollowerThrottle();
    const opens: Promise<void>[] = [];
    for (const t of this.view.topics()) {
      for (let p = 0; p < t.partitions; p++) {
        if (this.shards.handleOf(t.name, p) >= 0 || !this.view.partition(t.name, p)?.replicas.includes(this.view.localId)) continue;
        this.opened.set(t.name, t.id);
        opens.push(this.openPartition(t, p));
      }
    }
    const results = await Promise.allSettled(opens);
    // Entries are for the partitions placed here at start; a later open must not trust one.
    this.cleanShutdown.clear();
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await this.tellRoles();
    return stale.length > 0 || dropped > 0 || opens.length > 0;
  }

  /**
   * Closes, and deletes the data of, the open replicas whose partition's replica list no longer
   * holds this broker; returns how many. Each is first told its role in that image, so a leader
   * moved away answers its waiting produces NOT_LEADER_OR_FOLLOWER (clients go to the new leader
   * at once) instead of leaving them to time out.
   */
  private async closeDroppedReplicas(): Promise<number> {
    const closes: Promise<void>[] = [];
    for (const name of this.opened.keys()) {
      const t = this.view.topic(name);
      if (t === undefined) continue;
      const minIsr = Number(effective(t.configs, 'min.insync.replicas', this.config));
      for (let p = 0; p < t.partitions; p++) {
        const record = this.view.partition(name, p);
        if (record === undefined || record.replicas.includes(this.view.localId) || this.shards.handleOf(name, p) < 0) continue;
        const r = this.shards.removePartition(name, p)!;
        this.toldRoles.delete(r.handle);
        this.toldLeadership(r.handle, null);
        const control = this.controlOf(r.shard);
        closes.push((async () => {
          await control.setRoles([{ handle: r.handle, role: roleOf(this.view.localId, record, minIsr, false) }]);
          await control.closePartition(r.handle, true);
          this.onDirRemoved(this.partitionDir(name, p));
        })());
      }
    }
    await Promise.all(closes);
    return closes.length;
  }

  private async tellBrokers(): Promise<void> {
    const brokers = [...this.leaderEndpoints.replicaBrokers()];
    const key = JSON.stringify(brokers);
    if (key === this.toldBrokers) return;
    await Promise.all(Array.from({ length: this.shards.shardCount }, (_, shard) => this.controlOf(shard).setBrokers(this.view.localId, brokers)));
    this.toldBrokers = key;
  }

  /**
   * Each shard owns an equal share of the broker's follower throttle: its replica fetchers are
   * the only ones that see its followers' bytes, so a shared count would need a cross-thread
   * quota on every answer. With throttled partitions on fewer shards the broker stays below
   * the rate rather than above it.
   */
  private async tellFollowerThrottle(): Promise<void> {
    const { view } = this;
    const rate = throttleRate(FOLLOWER_THROTTLED_RATE, view.brokerConfigs(String(view.localId)), view.brokerConfigs(''));
    const share = rate / this.shards.shardCount;
    if (share === this.toldThrottle) return;
    await Promise.all(Array.from({ length: this.shards.shardCount }, (_, shard) => this.controlOf(shard).setFollowerThrottle(share)));
    this.toldThrottle = share;
  }

  /** Tells each shard the roles the image changed for the replicas it hosts. */
  private async tellRoles(): Promise<void> {
    const byShard = new Map<number, { handle: number; role: PartitionRole }[]>();
    const keys: [number, string][] = [];
    for (const t of this.view.topics()) {
      const minIsr = Number(effective(t.configs, 'min.insync.replicas', this.config));
      for (let p = 0; p < t.partitions; p++) {
        const handle = this.shards.handleOf(t.name, p);
        const record = handle < 0 ? undefined : this.view.partition(t.name, p);
        if (record === undefined) continue;
        const listed = this.followerLists.of(t.configs).has(p, this.view.localId);
        const key = roleKey(record, minIsr, listed);
        if (this.toldRoles.get(handle) === key) continue;
        const shard = this.shards.shardOf(handle);
        let list = byShard.get(shard);
        if (list === undefined) byShard.set(shard, (list = []));
        list.push({ handle, role: roleOf(this.view.localId, record, minIsr, listed) });
        keys.push([handle, key]);
      }
    }
    await Promise.all([...byShard].map(([shard, updates]) => this.controlOf(shard).setRoles(updates)));
    for (const [handle, key] of keys) this.toldRoles.set(handle, key);
    for (const updates of byShard.values()) for (const { handle, role } of updates) this.toldLeadership(handle, role);
  }

  private toldLeadership(handle: number, role: PartitionRole | null): void {
    const leads = role?.kind === 'leader';
    if (leads === this.leading.has(handle)) return;
    if (leads) this.leading.add(handle);
    else this.leading.delete(handle);
    this.onLeadership(handle, role?.kind === 'leader' ? role.replicas.filter((id) => id !== this.view.localId) : null);
  }

  private async closeTopic(name: string): Promise<void> {
    this.opened.delete(name);
    const removed = this.shards.removeTopic(name);
    for (const r of removed) {
      this.toldRoles.delete(r.handle);
      this.toldLeadership(r.handle, null);
    }
    await Promise.all(removed.map((r) => this.controlOf(r.shard).closePartition(r.handle, true)));
    for (const r of removed) this.onDirRemoved(this.partitionDir(name, r.partition));
  }

  private async openPartition(t: TopicImage, partition: number): Promise<void> {
    const dir = this.partitionDir(t.name, partition);
    await preparePartitionDir(dir, t.id);
    const { handle, shard } = this.shards.reserve();
    try {
      await this.controlOf(shard).openPartition(handle, t.name, partition, dir, toLogConfig(t.configs, this.config), this.cleanShutdown.claim(dir));
      // Routable only once the actor knows whether it leads: a produce arriving first would be refused.
      const record = this.view.partition(t.name, partition);
      if (record !== undefined) {
        const minIsr = Number(effective(t.configs, 'min.insync.replicas', this.config));
        const listed = this.followerLists.of(t.configs).has(partition, this.view.localId);
        const role = roleOf(this.view.localId, record, minIsr, listed);
        await this.controlOf(shard).setRoles([{ handle, role }]);
        this.toldRoles.set(handle, roleKey(record, minIsr, listed));
        this.toldLeadership(handle, role);
      }
    } catch (err) {
      this.shards.unreserve(shard);
      throw err;
    }
    this.shards.publish(t.name, partition, handle, shard);
  }
}
