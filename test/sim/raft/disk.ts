// One node's simulated disk, which outlives the node's crashes. It executes the driver contract
// of `Ready` (src/coordinator/raft/types.ts): the HardState is persisted synchronously; the log
// operations of a Ready (truncation, snapshot install, appends) are queued and become durable in
// FIFO order after a delay, and only then is the Ready advanced. A crash loses the queue, or with
// a torn tail keeps a random prefix of it, as a partly written append would. Tests only.
import type { Entry, HardState, NodeId, Ready, Snapshot } from '../../../src/coordinator/raft/types.js';
import type { RaftRestore } from '../../../src/coordinator/raft/raft_node.js';
import type { SimRandom } from './random.js';
import { InvariantViolation } from './checker.js';

export interface DiskOp {
  readonly ready: Ready;
  readonly doneAt: number;
}

export class SimDisk {
  hardState: HardState = { epoch: 0, votedFor: -1, leaderId: -1 };
  snapshot: Snapshot | null = null;
  /** Durable entries after the snapshot, contiguous. */
  entries: Entry[] = [];
  readonly pending: DiskOp[] = [];

  constructor(readonly nodeId: NodeId) {}

  get startOffset(): number {
    return this.snapshot?.meta.id.endOffset ?? 0;
  }

  get endOffset(): number {
    const last = this.entries[this.entries.length - 1];
    return last === undefined ? this.startOffset : last.offset + 1;
  }

  entryAt(offset: number): Entry | undefined {
    return this.entries[offset - this.startOffset];
  }

  /** The queue's tail completes no earlier than its head: one log file, one fsync order. */
  enqueue(ready: Ready, earliest: number): number {
    const tail = this.pending[this.pending.length - 1];
    const doneAt = Math.max(earliest, tail?.doneAt ?? 0);
    this.pending.push({ ready, doneAt });
    return doneAt;
  }

  completeHead(): Ready {
    const op = this.pending.shift();
    if (op === undefined) throw new Error(`disk ${this.nodeId}: completion with nothing queued`);
    this.write(op.ready, op.ready.entries.length);
    return op.ready;
  }

  /** A crash: queued writes are lost, or (torn) a random prefix of them reached the platter. */
  crash(torn: boolean, random: SimRandom): void {
    if (torn && this.pending.length > 0) {
      const cut = random.int(0, this.pending.length - 1);
      for (let i = 0; i < cut; i++) this.write((this.pending[i] as DiskOp).ready, (this.pending[i] as DiskOp).ready.entries.length);
      const partial = (this.pending[cut] as DiskOp).ready;
      this.write(partial, random.int(0, partial.entries.length));
    }
    this.pending.length = 0;
  }

  /** Everything is lost: the disk is as a fresh node's. */
  wipe(): void {
    this.hardState = { epoch: 0, votedFor: -1, leaderId: -1 };
    this.snapshot = null;
    this.entries = [];
    this.pending.length = 0;
  }

  /** The node's own snapshot (compaction): written before the log below it is dropped. */
  installLocalSnapshot(snapshot: Snapshot): void {
    const end = snapshot.meta.id.endOffset;
    if (end > this.endOffset) {
      throw new InvariantViolation('applyDurable', `node ${this.nodeId} snapshots to ${end} past its durable end ${this.endOffset}`);
    }
    this.entries = this.entries.slice(end - this.startOffset);
    this.snapshot = snapshot;
  }

  restore(bootstrapVoters: readonly NodeId[]): RaftRestore {
    return { hardState: this.hardState, snapshot: this.snapshot, entries: [...this.entries], bootstrapVoters };
  }

  private write(r: Ready, entryCount: number): void {
    if (r.truncateTo !== null) {
      if (r.truncateTo < this.startOffset) {
        throw new InvariantViolation('driverContract', `node ${this.nodeId} truncates to ${r.truncateTo} below its snapshot end ${this.startOffset}`);
      }
      this.entries.length = Math.min(this.entries.length, r.truncateTo - this.startOffset);
    }
    if (r.snapshot !== null) {
      this.snapshot = r.snapshot;
      this.entries = [];
    }
    for (let i = 0; i < entryCount; i++) {
      const e = r.entries[i] as Entry;
      if (e.offset !== this.endOffset) {
        throw new InvariantViolation('driverContract', `node ${this.nodeId} appends offset ${e.offset} at durable end ${this.endOffset} (no truncateTo)`);
      }
      this.entries.push(e);
    }
  }
}
