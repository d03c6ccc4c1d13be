// Replication and controller figures in Prometheus form (main thread), registered on the broker's
// registry once the broker has a cluster view: partitions this broker leads whose ISR is short
// (under-replicated, Kafka's UnderReplicatedPartitions), partitions without a leader and
// partitions being reassigned (cluster-wide, from this broker's metadata image, so every broker
// reports the same figure: aggregate with max), whether this node is the active controller, ISR
// shrinks and expands of the partitions it leads, and the size and free space of its log dir.
// Partition figures are counted from the image at scrape time (one pass over its partitions).
// ISR changes are counted from each published image that changed partitions (imagePublished),
// whoever made them: the leader's AlterPartition or the controller removing a fenced broker, so
// none between two scrapes is missed; a partition counts while one leader epoch of this broker
// lasts (a new leadership starts from the ISR it was handed). Memory: one entry per partition led
// here. Series are label-free but for the log dir, of which a broker has one.
import { Counter, Gauge, type Registry } from 'prom-client';
import { diskSpaceOf } from '../common/disk_space.js';
import type { ClusterView } from '../cluster/cluster_view.js';

export type ReplicationSource = Pick<ClusterView, 'localId' | 'revision' | 'controllerId' | 'topics' | 'partition'>;

/** A partition led here as the previous image showed it. */
interface Led {
  readonly leaderEpoch: number;
  readonly isr: number;
}

export interface PartitionCounts {
  /** Led by this broker and under-replicated. */
  underReplicated: number;
  /** Under-replicated, whoever leads them (the cluster's overview). */
  clusterUnderReplicated: number;
  offline: number;
  reassigning: number;
  /** Replicas a reassignment adds that have not yet joined the ISR. */
  replicasToCatchUp: number;
}

/** One pass over the image's partitions. */
export function countPartitions(view: ReplicationSource): PartitionCounts {
  const counts: PartitionCounts = { underReplicated: 0, clusterUnderReplicated: 0, offline: 0, reassigning: 0, replicasToCatchUp: 0 };
  for (const topic of view.topics()) {
    for (let p = 0; p < topic.partitions; p++) {
      const record = view.partition(topic.name, p);
      if (record === undefined) continue;
      const short = record.isr.length < record.replicas.length;
      if (record.leader < 0) counts.offline++;
      else if (short) {
        counts.clusterUnderReplicated++;
        if (record.leader === view.localId) counts.underReplicated++;
      }
      if (record.addingReplicas.length > 0 || record.removingReplicas.length > 0) {
        counts.reassigning++;
        for (const r of record.addingReplicas) if (!record.isr.includes(r)) counts.replicasToCatchUp++;
      }
    }
  }
  return counts;
}

export class ReplicationMetrics {
  private readonly underReplicated: Gauge;
  private readonly offline: Gauge;
  private readonly reassigning: Gauge;
  private readonly replicasToCatchUp: Gauge;
  private readonly controllerActive: Gauge;
  private readonly isrShrinks: Counter;
  private readonly isrExpands: Counter;
  private readonly dirTotal: Gauge<'dir'>;
  private readonly dirUsable: Gauge<'dir'>;
  /** By "topicId:partition", the partitions this broker led in the last image seen. */
  private led = new Map<string, Led>();
  private revision = -1;

  constructor(
    registry: Registry,
    private readonly view: ReplicationSource,
    private readonly logDir: string,
  ) {
    this.imagePublished();
    const registers = [registry];
    this.underReplicated = new Gauge({ name: 'sluice_under_replicated_partitions', help: 'Partitions this broker leads whose ISR is smaller than their replica set', registers });
    this.offline = new Gauge({ name: 'sluice_offline_partitions', help: 'Partitions without a leader, cluster-wide as this broker\'s metadata image shows them', registers });
    this.reassigning = new Gauge({ name: 'sluice_reassigning_partitions', help: 'Partitions with a reassignment in progress, cluster-wide as this broker\'s metadata image shows them', registers });
    this.replicasToCatchUp = new Gauge({
      name: 'sluice_reassignment_replicas_catching_up', help: 'Replicas reassignments add that have not joined the ISR yet, cluster-wide', registers,
    });
    this.controllerActive = new Gauge({ name: 'sluice_controller_active', help: '1 on the active controller (the metadata quorum leader), 0 elsewhere', registers });
    this.isrShrinks = new Counter({ name: 'sluice_isr_shrinks_total', help: 'ISR shrinks of partitions led here, as the metadata image shows them', registers });
    this.isrExpands = new Counter({ name: 'sluice_isr_expands_total', help: 'ISR expands of partitions led here, as the metadata image shows them', registers });
    this.dirTotal = new Gauge({ name: 'sluice_log_dir_total_bytes', help: 'Size of the file system holding the log dir (-1: unknown)', labelNames: ['dir'], registers });
    this.dirUsable = new Gauge({ name: 'sluice_log_dir_usable_bytes', help: 'Bytes still writable on the file system holding the log dir (-1: unknown)', labelNames: ['dir'], registers });
  }

  /** Counts the ISR changes of partitions led here since the previous image (call after each publish). */
  imagePublished(): void {
    const view = this.view;
    if (view.revision === this.revision) return;
    this.revision = view.revision;
    const led = new Map<string, Led>();
    for (const topic of view.topics()) {
      for (let p = 0; p < topic.partitions; p++) {
        const record = view.partition(topic.name, p);
        if (record === undefined || record.leader !== view.localId) continue;
        const key = `${topic.id}:${p}`;
        const now: Led = { leaderEpoch: record.leaderEpoch, isr: record.isr.length };
        led.set(key, now);
        const before = this.led.get(key);
        if (before === undefined || before.leaderEpoch !== now.leaderEpoch) continue;
        if (now.isr < before.isr) this.isrShrinks.inc();
        else if (now.isr > before.isr) this.isrExpands.inc();
      }
    }
    this.led = led;
  }

  /** Reads the image and the log dir's file system just before the registry is rendered. */
  async sample(): Promise<void> {
    const counts = countPartitions(this.view);
    this.underReplicated.set(counts.underReplicated);
    this.offline.set(counts.offline);
    this.reassigning.set(counts.reassigning);
    this.replicasToCatchUp.set(counts.replicasToCatchUp);
    this.controllerActive.set(this.view.controllerId() === this.view.localId ? 1 : 0);
    const space = await diskSpaceOf(this.logDir);
    this.dirTotal.set({ dir: this.logDir }, space.totalBytes);
    this.dirUsable.set({ dir: this.logDir }, space.usableBytes);
  }
}
