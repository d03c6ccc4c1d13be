// The garbage-collection pauses of the calling thread's isolate, by kind, as bucket counts handed
// on as deltas (take()). V8 stops the thread's JavaScript for each, so on a shard every one is
// event-loop delay of its own; at 100k msg/s a shard scavenges about six times a second, for
// 2-3 ms each. Fed by a PerformanceObserver of 'gc' entries, which sees only its own thread's
// isolate: main and each shard worker keep one. Bounded: one histogram per kind Node reports.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { BucketHistogram, DISK_FLUSH_BOUNDS, takeObserved, type BucketCounts } from './bucket_histogram.js';

/** minor: a scavenge of the young generation; major: a mark-compact; incremental and weakcb: their steps and callbacks. */
export type GcKind = 'minor' | 'major' | 'incremental' | 'weakcb';

const KIND_OF: ReadonlyMap<number, GcKind> = new Map([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

export const GC_KINDS: readonly GcKind[] = [...KIND_OF.values()];

/** Upper bounds (seconds) of pause durations: the disk timings' 100 us to 5 s. */
export const GC_PAUSE_BOUNDS = DISK_FLUSH_BOUNDS;

/** Pauses since the previous take(), for the kinds that paused. */
export type GcPauseCounts = ReadonlyArray<readonly [GcKind, BucketCounts]>;

export class GcPauses {
  private readonly byKind = new Map<GcKind, BucketHistogram>(GC_KINDS.map((k) => [k, new BucketHistogram(GC_PAUSE_BOUNDS)]));
  private readonly observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      // A 'gc' entry's detail ({ kind, flags }) is not in @types/node's PerformanceEntry.
      const kind = KIND_OF.get((e as { detail?: { kind?: number } }).detail?.kind ?? -1);
      if (kind !== undefined) this.byKind.get(kind)!.observe(e.duration / 1000);
    }
  });

  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  take(): GcPauseCounts {
    return takeObserved(this.byKind);
  }

  close(): void {
    this.observer.disconnect();
  }
}
