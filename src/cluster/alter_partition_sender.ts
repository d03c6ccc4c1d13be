// The broker's way from its partition leaders to the active controller for ISR changes (Kafka's
// AlterPartitionManager), main thread. Shards hand over one proposal per partition at a time
// (PartitionLeader keeps at most one in flight); the proposals that arrive in one turn of the event
// loop go to the controller as one AlterPartition request, following NOT_CONTROLLER to the next
// active controller, and each proposal is answered with its partition's result. A request that
// gets no answer in time, or one the controller refuses as a whole, answers every proposal in it
// with that error: the leader keeps a proposal whose fate is unknown counted and sends it again.
import type { AlterPartitionItem, AlterPartitionResult } from '../coordinator/replication/types.js';
import { LeaderRecoveryState } from '../coordinator/replication/types.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { callActiveController, type ControllerChannel } from './controller_channel.js';
import type { AlterPartitionTopic, AlterPartitionResult as ControllerPartitionResult } from './metadata/replication_control.js';

interface Waiting {
  readonly item: AlterPartitionItem;
  readonly resolve: (result: AlterPartitionResult) => void;
}

/** Proposals not yet sent, across all partitions; a leader has one at a time, so this bounds nothing a client controls. */
const MAX_QUEUED = 1_000_000;

export class AlterPartitionSender {
  private queued: Waiting[] = [];
  private scheduled = false;

  constructor(
    private readonly channel: ControllerChannel,
    private readonly brokerId: number,
    /** The broker's epoch as registered; -1 before registration. */
    private readonly brokerEpoch: () => number,
    private readonly timeoutMs: number,
  ) {}

  /** Resolves with the controller's answer for this partition; never rejects (failures are results). */
  send(item: AlterPartitionItem): Promise<AlterPartitionResult> {
    if (this.queued.length >= MAX_QUEUED) return Promise.resolve(failure(item, ErrorCode.REQUEST_TIMED_OUT));
    return new Promise((resolve) => {
      this.queued.push({ item, resolve });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        const batch = this.queued;
        this.queued = [];
        void this.flush(batch);
      });
    });
  }

  private async flush(batch: readonly Waiting[]): Promise<void> {
    const byTopic = new Map<string, Waiting[]>();
    for (const w of batch) {
      let list = byTopic.get(w.item.topicId);
      if (list === undefined) byTopic.set(w.item.topicId, (list = []));
      list.push(w);
    }
    const topics: AlterPartitionTopic[] = [...byTopic].map(([topicId, ws]) => ({
      topicId,
      topicName: null,
      partitions: ws.map(({ item }) => ({
        partition: item.partitionIndex,
        leaderEpoch: item.leaderEpoch,
        partitionEpoch: item.partitionEpoch,
        newIsr: item.newIsrWithEpochs,
        leaderRecoveryState: item.leaderRecoveryState,
      })),
    }));
    try {
      const reply = await callActiveController(
        this.channel,
        { kind: 'alterPartition', request: { brokerId: this.brokerId, brokerEpoch: this.brokerEpoch(), topics } },
        this.timeoutMs,
      );
      if (reply.kind !== 'alterPartition') throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `AlterPartition answered with a ${reply.kind} reply`);
      const results = new Map<string, ControllerPartitionResult>();
      for (const t of reply.topics) for (const p of t.partitions) results.set(`${t.topicId ?? ''}:${p.partition}`, p);
      for (const w of batch) {
        const r = reply.errorCode === ErrorCode.NONE ? results.get(`${w.item.topicId}:${w.item.partitionIndex}`) : undefined;
        w.resolve(r === undefined ? failure(w.item, reply.errorCode === ErrorCode.NONE ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : reply.errorCode) : resultOf(r));
      }
    } catch (err) {
      const code = err instanceof KafkaError ? err.code : ErrorCode.REQUEST_TIMED_OUT;
      for (const w of batch) w.resolve(failure(w.item, code));
    }
  }
}

function failure(item: AlterPartitionItem, errorCode: ErrorCode): AlterPartitionResult {
  return { partitionIndex: item.partitionIndex, errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: LeaderRecoveryState.RECOVERED, partitionEpoch: -1 };
}

function resultOf(r: ControllerPartitionResult): AlterPartitionResult {
  return {
    partitionIndex: r.partition,
    errorCode: r.errorCode,
    leaderId: r.leaderId,
    leaderEpoch: r.leaderEpoch,
    isr: r.isr,
    leaderRecoveryState: LeaderRecoveryState.RECOVERED,
    partitionEpoch: r.partitionEpoch,
  };
}
