// The CLI sampler's arithmetic and text reader: the strict Prometheus parser, histogram growth,
// merging and quantiles (a fast-check property against the true p99 of raw observations), lag
// deduplicated across coordinators, utilisation from counters, and the sampler over fixed texts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parsePrometheusText } from '../../../src/cli/prometheus_text.js';
import {
  consumerLag, histogramGrowth, histogramMaxBound, histogramQuantile, mergeHistograms, scrapeOf, usageBetween, type Histogram,
} from '../../../src/cli/cluster_metrics.js';
import { ClusterMetricsSampler, metricsEndpoints } from '../../../src/cli/reassign_metrics.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, Infinity];
const CAP = { nicBytesPerSec: 1000, diskBytesPerSec: 500 };

function histogram(observations: readonly number[]): Histogram {
  return BOUNDS.map((le) => [le, observations.filter((o) => o <= le).length] as const);
}

/** The true p99: the observation at rank ceil(0.99 n). */
function trueP99(observations: readonly number[]): number {
  const sorted = [...observations].sort((a, b) => a - b);
  return sorted[Math.ceil(0.99 * sorted.length) - 1]!;
}

function bucketOf(v: number): [number, number] {
  const i = BOUNDS.findIndex((le) => v <= le);
  return [i === 0 ? 0 : BOUNDS[i - 1]!, BOUNDS[i]!];
}

function brokerText(o: { produce: readonly number[]; fetch?: readonly number[]; cpu: number; netIn: number; netOut: number; replIn?: number; logWritten: number; extra?: string }): string {
  const h = (name: string, label: string, obs: readonly number[]): string =>
    histogram(obs).map(([le, n]) => `${name}_bucket{le="${le === Infinity ? '+Inf' : le}",${label}} ${n}`).join('\n');
  return [
    '# HELP sluice_request_duration_seconds Time from request decoded to response queued, by API',
    '# TYPE sluice_request_duration_seconds histogram',
    h('sluice_request_duration_seconds', 'api="Produce"', o.produce),
    h('sluice_request_duration_seconds', 'api="Fetch"', [30, 30, 30]),
    h('sluice_fetch_serve_seconds', 'kind="consumer"', o.fetch ?? []),
    `sluice_process_cpu_seconds_total ${o.cpu}`,
    'sluice_process_cpu_cores 4',
    `sluice_network_bytes_total{direction="in"} ${o.netIn}`,
    `sluice_network_bytes_total{direction="out"} ${o.netOut}`,
    `sluice_replication_bytes_total{direction="in"} ${o.replIn ?? 0}`,
    'sluice_replication_bytes_total{direction="out"} 0',
    `sluice_log_bytes_written_total ${o.logWritten}`,
    o.extra ?? '',
    '',
  ].join('\n');
}

describe('parsePrometheusText', () => {
  it('reads names, labels with escapes, special values and timestamps', () => {
    const got = parsePrometheusText([
      '# HELP x help text',
      '# TYPE x counter',
      'x 1',
      'y{a="b",c="d \\"q\\" \\\\ \\n"} +Inf 1700000000000',
      'z{} NaN',
      'w{a="1",} -2.5e3',
      '',
    ].join('\n'));
    assert.equal(got.length, 4);
    assert.deepStrictEqual(got[0], { name: 'x', labels: {}, value: 1 });
    assert.deepStrictEqual(got[1], { name: 'y', labels: { a: 'b', c: 'd "q" \\ \n' }, value: Infinity });
    assert.ok(Number.isNaN(got[2]!.value));
    assert.deepStrictEqual(got[3], { name: 'w', labels: { a: '1' }, value: -2500 });
  });

  it('refuses malformed lines with a Kafka error instead of reading them as zeros', () => {
    for (const line of ['x', 'x{a="1"', 'x{a=1} 2', 'x{a="1" b="2"} 3', 'x{a="1",a="2"} 3', '1x 2', 'x abc', 'x 1 2 3', 'x{a="\\q"} 1']) {
      assert.throws(() => parsePrometheusText(line), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.INVALID_REQUEST, line);
    }
  });

  it('reads what a broker registry renders', () => {
    const s = scrapeOf(parsePrometheusText(brokerText({ produce: [0.003, 0.2], cpu: 7, netIn: 10, netOut: 20, logWritten: 5 })), 0);
    assert.deepStrictEqual(s.produce.at(-1), [Infinity, 2]);
    assert.equal(s.fetch.at(-1)![1], 0, 'the Fetch request histogram (long polls) is not the serving one');
    assert.deepStrictEqual([s.cpuSeconds, s.cores, s.networkIn, s.networkOut, s.logBytesWritten], [7, 4, 10, 20, 5]);
  });
});

describe('histograms', () => {
  it('interpolate within the bucket as histogram_quantile does', () => {
    // 100 observations: 90 in (0, 0.01], 10 in (0.01, 0.025]: rank 99 is the 9th of 10 in the second bucket.
    const h: Histogram = [[0.01, 90], [0.025, 100], [Infinity, 100]];
    assert.ok(Math.abs(histogramQuantile(0.99, h) - (0.01 + 0.015 * 0.9)) < 1e-12);
    assert.equal(histogramQuantile(0.5, [[1, 0], [Infinity, 4]]), 1, 'in +Inf: the largest finite bound');
    assert.equal(histogramQuantile(0.99, [[1, 0], [Infinity, 0]]), 0, 'empty: 0');
  });

  it('bound the slowest observation by its bucket\'s upper bound', () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 0, max: 40, noNaN: true }), { maxLength: 50 }), (obs) => {
      const bound = histogramMaxBound(histogram(obs));
      if (obs.length === 0) return assert.equal(bound, 0);
      const max = Math.max(...obs);
      if (max > 30) return assert.equal(bound, 30, 'in +Inf: the largest finite bound');
      assert.equal(bound, bucketOf(max)[1], `max ${max}`);
    }), { numRuns: 300 });
  });

  it('grow per bucket, and count from zero after a restart', () => {
    const before: Histogram = [[0.1, 5], [1, 8], [Infinity, 9]];
    assert.deepStrictEqual(histogramGrowth([[0.1, 6], [1, 10], [Infinity, 12]], before), [[0.1, 1], [1, 2], [Infinity, 3]]);
    assert.deepStrictEqual(histogramGrowth([[0.1, 1], [1, 1], [Infinity, 2]], before), [[0.1, 1], [1, 1], [Infinity, 2]]);
  });

  it('merged p99 lies in the bucket of the true p99 and never falls when slow observations are added', () => {
    const latency = fc.double({ min: 0.0001, max: 40, noNaN: true });
    fc.assert(fc.property(
      fc.array(fc.array(latency, { maxLength: 60 }), { minLength: 1, maxLength: 3 }).filter((bs) => bs.some((b) => b.length > 0)),
      fc.array(fc.double({ min: 0, max: 40, noNaN: true }), { minLength: 1, maxLength: 20 }),
      fc.nat(2),
      (brokers, slowExtra, into) => {
        const all = brokers.flat();
        const p99 = histogramQuantile(0.99, mergeHistograms(brokers.map(histogram)));
        const truth = trueP99(all);
        if (truth > 30) assert.equal(p99, 30, 'beyond the last finite bound: that bound');
        else {
          const [lo, hi] = bucketOf(truth);
          assert.ok(p99 >= lo && p99 <= hi, `estimate ${p99} outside (${lo}, ${hi}] holding the true p99 ${truth}`);
        }
        // Observations at least as slow as every one so far, on any broker.
        const max = Math.max(...all);
        const slowed = brokers.map((b, i) => (i === into % brokers.length ? [...b, ...slowExtra.map((x) => max + x)] : b));
        const after = histogramQuantile(0.99, mergeHistograms(slowed.map(histogram)));
        assert.ok(after >= p99 - 1e-12, `p99 fell from ${p99} to ${after}`);
      },
    ), { numRuns: 500 });
  });
});

describe('lag and utilisation', () => {
  it('counts a group partition once, against the newest log end any broker reports', () => {
    const key = 'g\u0000t\u00000';
    const a = scrapeOf(parsePrometheusText('sluice_group_committed_offset{group="g",topic="t",partition="0"} 40\nsluice_partition_log_end_offset{topic="t",partition="0"} 90\n'), 0);
    const b = scrapeOf(parsePrometheusText('sluice_partition_log_end_offset{topic="t",partition="0"} 100\n'), 0);
    // A coordinator that moved mid-scrape: both report the group; the newer commit counts.
    const c = scrapeOf(parsePrometheusText('sluice_group_committed_offset{group="g",topic="t",partition="0"} 45\nsluice_group_lag_messages{group="g",topic="t",partition="0"} 3\n'), 0);
    assert.equal(consumerLag([a, b, c]), 55);
    assert.equal(a.committed.get(key), 40);
    // Nobody reports the partition's end: the coordinator's own figure.
    assert.equal(consumerLag([c]), 3);
  });

  it('leaves out a group with no members, whose lag only grows', () => {
    const text = (group: string, members: number): string => `sluice_group_member_count{group="${group}"} ${members}\n`
      + `sluice_group_committed_offset{group="${group}",topic="t",partition="0"} 40\n`;
    const end = 'sluice_partition_log_end_offset{topic="t",partition="0"} 100\n';
    assert.equal(consumerLag([scrapeOf(parsePrometheusText(text('live', 2) + text('gone', 0) + end), 0)]), 60);
    assert.equal(scrapeOf(parsePrometheusText(text('gone', 0)), 0).members.get('gone'), 0);
  });

  it('derives CPU, NIC, disk and replication use from counter growth', () => {
    const at = (ms: number, cpu: number, netIn: number, netOut: number, logWritten: number, replIn: number) =>
      scrapeOf(parsePrometheusText(brokerText({ produce: [], cpu, netIn, netOut, logWritten, replIn })), ms);
    const u = usageBetween(1, at(2000, 12, 3000, 1000, 1000, 600), at(0, 10, 1000, 0, 0, 0), CAP);
    assert.equal(u.cpu, 2 / 2 / 4);
    assert.equal(u.nic, 1000 / 1000, 'the busier direction');
    assert.equal(u.disk, 500 / 500);
    assert.equal(u.replicationBytesPerSec, 300);
    assert.equal(u.cpuBytesPerSec, 1500 / 0.25);
    assert.deepStrictEqual([u.nicBytesPerSec, u.diskBytesPerSec], [1000, 500]);
    const primed = usageBetween(1, at(0, 10, 0, 0, 0, 0), null, CAP);
    assert.deepStrictEqual([primed.cpu, primed.nic, primed.disk, primed.replicationBytesPerSec], [0, 0, 0, 0]);
  });
});

describe('ClusterMetricsSampler', () => {
  it('primes, then samples the window; a broker that does not answer is left out and counted', async () => {
    const texts = new Map<string, string[]>([
      ['http://a/metrics', [
        brokerText({ produce: [0.001], cpu: 1, netIn: 0, netOut: 0, logWritten: 0 }),
        brokerText({ produce: [0.001, ...Array<number>(99).fill(0.003)], fetch: [0.0004], cpu: 3, netIn: 4000, netOut: 100, logWritten: 1000 }),
      ]],
      ['http://b/metrics', [brokerText({ produce: [], cpu: 0, netIn: 0, netOut: 0, logWritten: 0 })]],
    ]);
    let clock = 0;
    const sampler = new ClusterMetricsSampler({
      endpoints: () => Promise.resolve([{ id: 1, url: 'http://a/metrics' }, { id: 2, url: 'http://b/metrics' }]),
      capacities: CAP,
      timeoutMs: 1000,
      now: () => clock,
      fetchImpl: (url) => {
        const next = texts.get(url)!.shift();
        return Promise.resolve(next === undefined ? new Response('down', { status: 503 }) : new Response(next));
      },
    });
    const first = await sampler.sample();
    assert.deepStrictEqual([first.produceP99Ms, first.fetchP99Ms, first.consumerLag], [0, 0, 0]);
    assert.deepStrictEqual(first.brokers.map((b) => [b.id, b.cpu]), [[1, 0], [2, 0]]);
    clock = 2000;
    const second = await sampler.sample();
    assert.deepStrictEqual(sampler.unanswered, [2]);
    assert.equal(sampler.failedScrapes, 1);
    assert.deepStrictEqual(second.brokers.map((b) => b.id), [1]);
    // 99 new observations in (0.0025, 0.005]: rank 98.01 of 99 in that bucket.
    assert.ok(second.produceP99Ms > 2.5 && second.produceP99Ms <= 5, `produce p99 ${second.produceP99Ms}`);
    assert.ok(second.fetchP99Ms > 0 && second.fetchP99Ms <= 0.5);
    assert.equal(second.brokers[0]!.cpu, 2 / 2 / 4);
    assert.equal(second.brokers[0]!.nic, 2000 / 1000);
  });

  it('scrapes only unfenced brokers that registered an admin address', () => {
    const b = { host: 'h', port: 1, rack: null };
    assert.deepStrictEqual(metricsEndpoints([
      { ...b, id: 1, state: 'running', adminAddress: 'h:8081' },
      { ...b, id: 2, state: 'fenced', adminAddress: 'h:8082' },
      { ...b, id: 3, state: 'warming', adminAddress: null },
      { ...b, id: 4, state: 'warming', adminAddress: 'h:8084' },
    ]), [{ id: 1, url: 'http://h:8081/metrics' }, { id: 4, url: 'http://h:8084/metrics' }]);
  });
});
