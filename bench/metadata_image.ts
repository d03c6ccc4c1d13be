// The metadata image at design-point scale: heap bytes per partition of a 1M-partition, RF 3,
// 1,000-broker image (budget ≤ 1 KiB), snapshot encode and load times, the size and apply time
// of a one-partition leader change, and an all-topics Metadata response at 10k and 100k
// partitions encoded per request versus once per image version, through the Metadata handler's own cache (Kafka's anchor, KAFKA-9670:
// 9.6 ms and 6.7 MB allocated per request at 10k partitions).
// Run: node --expose-gc --max-semi-space-size=64 dist/bench/metadata_image.js   (~1 min, ~1.5 GB heap)
// The large young generation keeps one response's allocations from being collected mid-measure.
import { performance } from 'node:perf_hooks';
import { applyRecords } from '../src/cluster/metadata/delta.js';
import { MetadataImage } from '../src/cluster/metadata/image.js';
import { ImageClusterView } from '../src/cluster/metadata/image_view.js';
import { encodeBatch, type MetadataRecord } from '../src/cluster/metadata/records.js';
import { encodeSnapshot, loadSnapshot } from '../src/cluster/metadata/snapshot.js';
import { EncodedBody } from '../src/net/handler.js';
import { AllTopicsCache, allTopicsAnswer, type MetadataDeps } from '../src/net/handlers/metadata.js';
import { MetadataApi } from '../src/protocol/apis/metadata.js';
import { Writer } from '../src/protocol/writer.js';

const BROKERS = 1000;
const RF = 3;
const PARTITIONS_PER_TOPIC = 100;
const METADATA_VERSION = 12;
const RUNS = 20;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with: node --expose-gc --max-semi-space-size=64 dist/bench/metadata_image.js');
  process.exit(2);
}

function topicId(t: number): string {
  return (t + 1).toString(16).padStart(32, '0');
}

/** Cluster records: brokers, then topics whose replica lists stripe over all brokers (mostly distinct lists). */
function clusterRecords(topics: number): MetadataRecord[] {
  const out: MetadataRecord[] = [];
  for (let b = 0; b < BROKERS; b++) {
    out.push({
      type: 'registerBroker', brokerId: b, incarnationId: (b + 1).toString(16).padStart(32, '0'), brokerEpoch: b,
      endpoints: [{ name: 'PLAINTEXT', host: `broker-${b}.example`, port: 9092, securityProtocol: 0 }],
      rack: `rack-${b % 3}`, fenced: false, inControlledShutdown: false,
    });
  }
  let n = 0;
  for (let t = 0; t < topics; t++) {
    out.push({ type: 'topic', name: `topic-${t}`, topicId: topicId(t) });
    for (let p = 0; p < PARTITIONS_PER_TOPIC; p++, n++) {
      const first = n % BROKERS;
      const step = 1 + (Math.floor(n / BROKERS) % (BROKERS - 1));
      const replicas = Array.from({ length: RF }, (_, r) => (first + r * step) % BROKERS);
      out.push({ type: 'partition', topicId: topicId(t), partition: p, replicas, isr: [...replicas], removingReplicas: [], addingReplicas: [], leader: first, leaderEpoch: 0, partitionEpoch: 0 });
    }
  }
  return out;
}

function buildImage(topics: number): MetadataImage {
  return applyRecords(MetadataImage.EMPTY, clusterRecords(topics), { endOffset: 1, epoch: 1 });
}

function heapBytes(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function ms(x: number): string {
  return `${x.toFixed(2)} ms`;
}

/** Wall and CPU time of `fn` (the machine may be shared: CPU time is the steadier figure). */
function timed<T>(fn: () => T): { value: T; text: string } {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = fn();
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { value, text: `${ms(wall)} (CPU ${ms((cpu.user + cpu.system) / 1000)})` };
}

function mb(x: number): string {
  return `${(x / 1e6).toFixed(2)} MB`;
}

/** The Metadata handler's dependencies over `view`, every partition served; with a cache or without. */
function metadataDeps(view: ImageClusterView, cached: boolean): MetadataDeps {
  return {
    cluster: view,
    partitions: { handleOf: () => 0 },
    topics: { ensure: () => Promise.reject(new Error('no auto-creation in the bench')) },
    autoCreateTopics: false,
    allTopicsCache: cached ? new AllTopicsCache(() => view.revision) : null,
  };
}

/** One all-topics request as the broker answers it: the handler's answer, encoded unless it already is. */
function encodeMetadata(deps: MetadataDeps): readonly Buffer[] {
  const res = allTopicsAnswer(deps, METADATA_VERSION);
  if (res instanceof EncodedBody) return res.chunks;
  const w = new Writer(64 * 1024);
  MetadataApi.encodeResponse(METADATA_VERSION, res, w);
  return w.finish();
}

/** Median time and heap growth of `fn` (no collection between start and end, thanks to the large young generation). */
function measure(fn: () => unknown): { time: number; allocated: number } {
  const times: number[] = [];
  const allocs: number[] = [];
  fn();
  for (let i = 0; i < RUNS; i++) {
    gc!();
    const before = process.memoryUsage();
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
    const after = process.memoryUsage();
    allocs.push(after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers);
  }
  return { time: median(times), allocated: median(allocs) };
}

function metadataBench(partitions: number): void {
  const view = new ImageClusterView('bench', 0, 'PLAINTEXT', buildImage(partitions / PARTITIONS_PER_TOPIC));
  view.setControllerId(0);
  const uncached = metadataDeps(view, false);
  const size = encodeMetadata(uncached).reduce((n, b) => n + b.length, 0);
  const perRequest = measure(() => encodeMetadata(uncached));
  const cachedDeps = metadataDeps(view, true);
  const cached = measure(() => encodeMetadata(cachedDeps));
  console.log(`Metadata all topics, ${partitions} partitions (v${METADATA_VERSION}, ${mb(size)} body): ` +
    `per request ${ms(perRequest.time)} / ${mb(perRequest.allocated)} allocated; ` +
    `cached per image version ${ms(cached.time)} / ${mb(cached.allocated)} per request (encode once: ${ms(perRequest.time)})`);
}

function main(): void {
  console.log('node --expose-gc --max-semi-space-size=64 dist/bench/metadata_image.js');
  const partitions = 1_000_000;
  const topics = partitions / PARTITIONS_PER_TOPIC;
  const base = heapBytes();
  const built = timed(() => buildImage(topics));
  let image = built.value;
  const used = heapBytes() - base;
  console.log(`image: ${partitions} partitions, RF ${RF}, ${BROKERS} brokers, ${topics} topics: ${(used / partitions).toFixed(0)} heap bytes per partition (budget 1024), built in ${built.text}`);

  const encoded = timed(() => encodeSnapshot(image));
  const snapshot = encoded.value;
  const loaded = timed(() => loadSnapshot(snapshot, image.provenance));
  if (loaded.value.partitionCount() !== partitions) throw new Error('snapshot lost partitions');
  console.log(`snapshot: ${mb(snapshot.length)}, encode ${encoded.text}, load ${loaded.text}`);

  const change: MetadataRecord = {
    type: 'partitionChange', topicId: topicId(topics - 1), partition: PARTITIONS_PER_TOPIC - 1, leader: 7,
    isr: null, replicas: null, removingReplicas: null, addingReplicas: null,
  };
  const applied = measure(() => {
    image = applyRecords(image, [change], { endOffset: image.provenance.endOffset + 1, epoch: 1 });
  });
  console.log(`leader change of one partition: ${encodeBatch([change]).length} bytes as a batch, applied in ${ms(applied.time)} at ${partitions} partitions (${mb(applied.allocated)} allocated: the topic's columns and one bucket of each topic map are copied)`);

  metadataBench(10_000);
  metadataBench(100_000);
}

main();
