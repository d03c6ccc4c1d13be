// A Prometheus counter fed from totals a shard keeps and reports in its snapshots. Main thread.
import type { Counter } from 'prom-client';

/**
 * A Prometheus counter fed from cumulative totals kept elsewhere (a shard). A total lower than
 * the last one seen means its source restarted, and counts from zero again.
 */
export class CumulativeCounter<L extends string> {
  private readonly last = new Map<string, number>();
  constructor(private readonly counter: Counter<L>) {}
  feed(labels: Record<L, string>, key: string, total: number): void {
    const prev = this.last.get(key) ?? 0;
    const delta = total >= prev ? total - prev : total;
    this.last.set(key, total);
    // Incremented by 0 too, so a series exists from the first snapshot on and rate() sees its start.
    this.counter.inc(labels, delta);
  }
  remove(labels: Record<L, string>, key: string): void {
    this.last.delete(key);
    this.counter.remove(labels);
  }
}
