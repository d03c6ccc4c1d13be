// The pure half of the CLI's metric sampler (reassign_metrics.ts): what one broker's /metrics
// scrape holds that a reassignment watches (`scrapeOf`), and the executor's MetricsSample over the
// window between two rounds of scrapes (`sampleBetween`). CLI process; no I/O.
//
// Latency p99s come from merged histograms: each broker's bucket counts grown over the window,
// summed across brokers, and the quantile interpolated within its bucket as Prometheus'
// histogram_quantile does. Counters that went down mean the broker restarted: the window then
// counts from zero, as Prometheus' rate() does.
import type { MetricsSample } from '../cluster/expansion/executor.js';
import type { BrokerUsage } from '../cluster/expansion/throttle.js';
import type { PromSample } from './prometheus_text.js';

/** Cumulative counts by upper bound (`le`, +Inf last), ascending. */
export type Histogram = ReadonlyArray<readonly [le: number, count: number]>;

/** What a reassignment reads from one broker's scrape. */
export interface BrokerScrape {
  readonly atMs: number;
  /** sluice_request_duration_seconds{api="Produce"}. */
  readonly produce: Histogram;
  /** sluice_fetch_serve_seconds{kind="consumer"}. */
  readonly fetch: Histogram;
  readonly cpuSeconds: number;
  readonly cores: number;
  readonly networkIn: number;
  readonly networkOut: number;
  readonly replicationIn: number;
  readonly replicationOut: number;
  readonly logBytesWritten: number;
  /** Committed offsets by group\0topic\0partition (only a group's coordinator reports them). */
  readonly committed: ReadonlyMap<string, number>;
  /** The lag this broker computed, by the same key (absent when it does not host the partition). */
  readonly lag: ReadonlyMap<string, number>;
  /** Members of each group its coordinator reports (a group with none consumes nothing). */
  readonly members: ReadonlyMap<string, number>;
  /** Log end offsets of the replicas it hosts, by topic\0partition. */
  readonly logEnd: ReadonlyMap<string, number>;
}

export interface Capacities {
  /** NIC bandwidth per direction, bytes/s. */
  readonly nicBytesPerSec: number;
  /** Disk write bandwidth, bytes/s. */
  readonly diskBytesPerSec: number;
}

/**
 * Histogram `name` of one scrape: the series whose labels `selects`, summed bucket by bucket
 * (the series of one family share their bounds, as one broker's do).
 */
export function histogramOf(samples: readonly PromSample[], name: string, selects: (labels: Readonly<Record<string, string>>) => boolean): Histogram {
  const byLe = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || !selects(s.labels)) continue;
    const le = s.labels['le'];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    byLe.set(bound, (byLe.get(bound) ?? 0) + s.value);
  }
  return [...byLe].sort((a, b) => a[0] - b[0]);
}

export function scrapeOf(samples: readonly PromSample[], atMs: number): BrokerScrape {
  let cpuSeconds = 0;
  let cores = 1;
  let networkIn = 0;
  let networkOut = 0;
  let replicationIn = 0;
  let replicationOut = 0;
  let logBytesWritten = 0;
  const committed = new Map<string, number>();
  const lag = new Map<string, number>();
  const members = new Map<string, number>();
  const logEnd = new Map<string, number>();
  for (const s of samples) {
    const l = s.labels;
    switch (s.name) {
      case 'sluice_process_cpu_seconds_total': cpuSeconds = s.value; break;
      case 'sluice_process_cpu_cores': cores = Math.max(1, s.value); break;
      case 'sluice_network_bytes_total':
        if (l['direction'] === 'in') networkIn = s.value;
        else if (l['direction'] === 'out') networkOut = s.value;
        break;
      case 'sluice_replication_bytes_total':
        if (l['direction'] === 'in') replicationIn = s.value;
        else if (l['direction'] === 'out') replicationOut = s.value;
        break;
      case 'sluice_log_bytes_written_total': logBytesWritten = s.value; break;
      case 'sluice_group_committed_offset': committed.set(`${l['group']}\u0000${l['topic']}\u0000${l['partition']}`, s.value); break;
      case 'sluice_group_member_count': if (l['group'] !== undefined) members.set(l['group'], s.value); break;
      case 'sluice_group_lag_messages': lag.set(`${l['group']}\u0000${l['topic']}\u0000${l['partition']}`, s.value); break;
      case 'sluice_partition_log_end_offset': logEnd.set(`${l['topic']}\u0000${l['partition']}`, s.value); break;
    }
  }
  return {
    atMs,
    produce: histogramOf(samples, 'sluice_request_duration_seconds', (l) => l['api'] === 'Produce'),
    fetch: histogramOf(samples, 'sluice_fetch_serve_seconds', (l) => l['kind'] === 'consumer'),
    cpuSeconds, cores, networkIn, networkOut, replicationIn, replicationOut, logBytesWritten, committed, lag, members, logEnd,
  };
}

/** A counter's growth; a counter that went down restarted, and counts from zero. */
function grown(now: number, before: number): number {
  return now >= before ? now - before : now;
}

/** The cumulative count of `h` at bound `le`: its count at the largest bound not above `le`. */
function countAt(h: Histogram, le: number): number {
  let c = 0;
  for (const [b, n] of h) {
    if (b > le) break;
    c = n;
  }
  return c;
}

/** Each bucket's growth from `before` to `now` (cumulative); a broker that restarted counts from zero. */
export function histogramGrowth(now: Histogram, before: Histogram | null): Histogram {
  const total = now.length === 0 ? 0 : now[now.length - 1]![1];
  if (before === null || before.length === 0 || total < before[before.length - 1]![1]) return now;
  return now.map(([le, n]) => [le, Math.max(0, n - countAt(before, le))] as const);
}

/** The sum of cumulative histograms over the union of their bounds. */
export function mergeHistograms(hs: readonly Histogram[]): Histogram {
  const bounds = [...new Set(hs.flatMap((h) => h.map(([le]) => le)))].sort((a, b) => a - b);
  return bounds.map((le) => [le, hs.reduce((sum, h) => sum + countAt(h, le), 0)] as const);
}

/**
 * Prometheus' histogram_quantile: the bucket holding rank q·total, interpolated linearly within
 * it (the first bucket starts at 0); in the +Inf bucket, the largest finite bound. 0 when empty.
 */
export function histogramQuantile(q: number, h: Histogram): number {
  if (h.length === 0) return 0;
  const total = h[h.length - 1]![1];
  if (!(total > 0)) return 0;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (let i = 0; i < h.length; i++) {
    const [le, count] = h[i]!;
    if (count >= rank) {
      if (le === Infinity) return i === 0 ? 0 : h[i - 1]![0];
      if (count === prevCount) return le;
      return prevLe + (le - prevLe) * ((rank - prevCount) / (count - prevCount));
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

/**
 * The upper bound of the bucket holding the largest observation: the slowest one took at most
 * this long. In the +Inf bucket, the largest finite bound (the slowest took longer). 0 when empty.
 */
export function histogramMaxBound(h: Histogram): number {
  const total = h.length === 0 ? 0 : h[h.length - 1]![1];
  if (!(total > 0)) return 0;
  const i = h.findIndex(([, count]) => count === total);
  const le = h[i]![0];
  return le !== Infinity ? le : i > 0 ? h[i - 1]![0] : 0;
}

/**
 * Consumer lag now, summed over every (group, topic, partition) of a group with members: the
 * newest log end offset any broker reports for the partition less the committed offset (the
 * highest any coordinator reports, so a coordinator moving mid-scrape is counted once); where no
 * broker reports the partition's end, the lag a coordinator computed. A group whose coordinator
 * reports no members is left out: nobody consumes there, so its lag grows with every produce and
 * says nothing of how consumers keep up (a group whose members are not reported counts).
 */
export function consumerLag(scrapes: readonly BrokerScrape[]): number {
  const committed = new Map<string, number>();
  const reported = new Map<string, number>();
  const ends = new Map<string, number>();
  const members = new Map<string, number>();
  for (const s of scrapes) {
    for (const [g, n] of s.members) members.set(g, Math.max(n, members.get(g) ?? 0));
    for (const [k, v] of s.committed) committed.set(k, Math.max(v, committed.get(k) ?? -Infinity));
    for (const [k, v] of s.lag) reported.set(k, Math.max(v, reported.get(k) ?? 0));
    for (const [k, v] of s.logEnd) ends.set(k, Math.max(v, ends.get(k) ?? -Infinity));
  }
  let lag = 0;
  for (const [key, offset] of committed) {
    if (members.get(key.slice(0, key.indexOf('\u0000'))) === 0) continue;
    const end = ends.get(key.slice(key.indexOf('\u0000') + 1));
    lag += end === undefined ? reported.get(key) ?? 0 : Math.max(0, end - offset);
  }
  return lag;
}

/** A broker's utilisation over the window from `before` to `now` (null before: primed, all zero). */
export function usageBetween(id: number, now: BrokerScrape, before: BrokerScrape | null, cap: Capacities): BrokerUsage {
  const dt = before === null ? 0 : (now.atMs - before.atMs) / 1000;
  if (before === null || !(dt > 0)) {
    return { id, cpu: 0, nic: 0, disk: 0, cpuBytesPerSec: 0, nicBytesPerSec: cap.nicBytesPerSec, diskBytesPerSec: cap.diskBytesPerSec, replicationBytesPerSec: 0 };
  }
  const rate = (a: number, b: number): number => grown(a, b) / dt;
  const cpu = Math.min(1, rate(now.cpuSeconds, before.cpuSeconds) / now.cores);
  const netIn = rate(now.networkIn, before.networkIn);
  const netOut = rate(now.networkOut, before.networkOut);
  return {
    id,
    cpu,
    nic: Math.max(netIn, netOut) / cap.nicBytesPerSec,
    disk: rate(now.logBytesWritten, before.logBytesWritten) / cap.diskBytesPerSec,
    // An estimate: the bytes the broker moved per CPU share, as if CPU cost grew linearly with
    // socket traffic (it also serves requests that move few bytes, so this is on the low side).
    cpuBytesPerSec: (netIn + netOut) / Math.max(cpu, 0.01),
    nicBytesPerSec: cap.nicBytesPerSec,
    diskBytesPerSec: cap.diskBytesPerSec,
    replicationBytesPerSec: rate(now.replicationIn, before.replicationIn) + rate(now.replicationOut, before.replicationOut),
  };
}

/**
 * The executor's sample over the window between two rounds of scrapes, by broker id. A broker
 * missing from `before` is primed (zero utilisation, its histograms left out); with no `before`
 * at all the sample is all zeros.
 */
export function sampleBetween(now: ReadonlyMap<number, BrokerScrape>, before: ReadonlyMap<number, BrokerScrape> | null, cap: Capacities): MetricsSample {
  const produce: Histogram[] = [];
  const fetch: Histogram[] = [];
  const brokers: BrokerUsage[] = [];
  for (const [id, s] of [...now].sort((a, b) => a[0] - b[0])) {
    const prev = before?.get(id) ?? null;
    brokers.push(usageBetween(id, s, prev, cap));
    if (prev === null) continue;
    produce.push(histogramGrowth(s.produce, prev.produce));
    fetch.push(histogramGrowth(s.fetch, prev.fetch));
  }
  if (before === null) return { produceP99Ms: 0, fetchP99Ms: 0, consumerLag: 0, brokers };
  return {
    produceP99Ms: histogramQuantile(0.99, mergeHistograms(produce)) * 1000,
    fetchP99Ms: histogramQuantile(0.99, mergeHistograms(fetch)) * 1000,
    consumerLag: consumerLag([...now.values()]),
    brokers,
  };
}
