// Every node's state machine over the committed metadata log (the quorum driver's
// QuorumStateMachine): applies each committed entry to the metadata image in offset order,
// publishes the new image to the ImageClusterView, and wakes whoever waits for an offset to be
// applied (a forwarded topic change, a broker waiting to be caught up). The driver decides when
// to snapshot and asks for the bytes. Main thread.
import type { Entry, Snapshot } from '../coordinator/raft/types.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { applyEntry } from './metadata/delta.js';
import { MetadataImage } from './metadata/image.js';
import type { ImageClusterView } from './metadata/image_view.js';
import { encodeSnapshot, loadSnapshot } from './metadata/snapshot.js';

/** Bound on callers waiting for an offset: each is a request in flight on some connection. */
export const MAX_APPLY_WAITERS = 100_000;

/** What waits for the image to reach an offset (the forwarding store, the broker lifecycle). */
export interface AppliedMetadata {
  /** The offset of the last applied entry; -1 before any. */
  appliedOffset(): number;
  /** Resolves once the entry at `offset` is applied (at once if it already is). */
  applied(offset: number): Promise<void>;
}

interface Waiter {
  readonly offset: number;
  readonly resolve: () => void;
}

export class MetadataFollower implements AppliedMetadata {
  private current: MetadataImage = MetadataImage.EMPTY;
  private waiters: Waiter[] = [];

  constructor(private readonly view: ImageClusterView) {
    this.current = view.image;
  }

  get image(): MetadataImage {
    return this.current;
  }

  appliedOffset(): number {
    return this.current.provenance.endOffset - 1;
  }

  applied(offset: number): Promise<void> {
    if (offset <= this.appliedOffset()) return Promise.resolve();
    if (this.waiters.length >= MAX_APPLY_WAITERS) {
      return Promise.reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${this.waiters.length} requests already wait for metadata to apply`));
    }
    return new Promise((resolve) => this.waiters.push({ offset, resolve }));
  }

  /**
   * Committed entries in offset order. Control entries (leader changes, voter sets) move the
   * applied offset without touching the image's contents. One image is published per call.
   */
  apply(entries: readonly Entry[]): void {
    for (const entry of entries) {
      const provenance = { endOffset: entry.offset + 1, epoch: entry.epoch };
      if (entry.kind === 'data') {
        this.current = applyEntry(this.current, entry.data, provenance);
      } else {
        const c = this.current;
        this.current = new MetadataImage(provenance, c.features, c.brokers, c.topicsByName, c.topicsById, c.configs, c.producerIds);
      }
    }
    if (entries.length > 0) this.publish();
  }

  /** A snapshot replaces everything applied so far (a restart, or a follower too far behind the leader's log). */
  restore(snapshot: Snapshot): void {
    this.current = loadSnapshot(snapshot.data, snapshot.meta.id);
    this.publish();
  }

  /** The applied image as snapshot bytes (the driver compacts the log below appliedOffset() + 1). */
  snapshot(): Uint8Array {
    return encodeSnapshot(this.current);
  }

  private publish(): void {
    this.view.update(this.current);
    const applied = this.appliedOffset();
    if (this.waiters.length === 0 || this.waiters.every((w) => w.offset > applied)) return;
    const ready = this.waiters.filter((w) => w.offset <= applied);
    this.waiters = this.waiters.filter((w) => w.offset > applied);
    for (const w of ready) w.resolve();
  }
}
