// A broker's side of the committed metadata log: takes each new committed image (from the
// metadata quorum's image listener), publishes it to the ImageClusterView, and wakes whoever
// waits for the image to show something (a forwarded topic change, a broker waiting to see its
// own unfencing). Waiting on what the image shows, not on an offset, works the same whether the
// answer came from this process's controller or over the controller listener, whose Kafka
// responses carry no offset. Main thread.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { MetadataImage } from './metadata/image.js';
import type { ImageClusterView } from './metadata/image_view.js';

/** Bound on callers waiting for the image: each is a request in flight on some connection. */
export const MAX_IMAGE_WAITERS = 10_000;

/** What waits for the committed image (the forwarding store, the broker lifecycle). */
export interface AppliedMetadata {
  /** The offset of the last applied entry; -1 before any. */
  appliedOffset(): number;
  /**
   * Resolves once an applied image satisfies `holds` (at once if the current one does); rejects
   * with REQUEST_TIMED_OUT after `timeoutMs`.
   */
  until(holds: (image: MetadataImage) => boolean, timeoutMs: number): Promise<void>;
}

interface Waiter {
  readonly holds: (image: MetadataImage) => boolean;
  readonly done: () => void;
}

export class MetadataFollower implements AppliedMetadata {
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly view: ImageClusterView) {}

  get image(): MetadataImage {
    return this.view.image;
  }

  appliedOffset(): number {
    return this.view.image.provenance.endOffset - 1;
  }

  until(holds: (image: MetadataImage) => boolean, timeoutMs: number): Promise<void> {
    if (holds(this.view.image)) return Promise.resolve();
    if (this.waiters.size >= MAX_IMAGE_WAITERS) {
      return Promise.reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${this.waiters.size} requests already wait for metadata to apply`));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        holds,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `the change was committed but not applied here within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Called after each published image (the partition reconciler follows the view). */
  onPublish: () => void = () => {};

  /** The next committed image. */
  publish(image: MetadataImage): void {
    this.view.update(image);
    this.onPublish();
    for (const w of [...this.waiters]) if (w.holds(image)) w.done();
  }
}
