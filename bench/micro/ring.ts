// Throughput of SpscRing. Cross-thread: a worker produces fixed-size messages (copying the payload
// in, as the network thread copies request bytes), the main thread consumes with waitForData and
// reads each message's sequence number; prints msgs/s, MB/s of payload and wake-up counts. Also
// the same loop with both roles on the main thread, as the ring's CPU cost per message.
// Run: node dist/bench/micro/ring.js   (this file is also the worker; workerData tells it apart)
// Bounded: fixed message counts per case, RUNS runs each, and a per-run deadline.
import { MessageChannel, Worker, isMainThread, workerData, type MessagePort } from 'node:worker_threads';
import { SpscRing } from '../../src/actors/ring_buffer.js';
import { RingDoorbell } from '../../src/actors/ring_doorbell.js';

interface ProducerData {
  readonly sab: SharedArrayBuffer;
  readonly doorbell: MessagePort;
  readonly messageBytes: number;
  readonly messages: number;
}

interface Case {
  readonly messageBytes: number;
  readonly messages: number;
  readonly capacityBytes: number;
}

const CASES: readonly Case[] = [
  { messageBytes: 100, messages: 3_000_000, capacityBytes: 1 << 20 },
  { messageBytes: 1024, messages: 1_000_000, capacityBytes: 1 << 20 },
  { messageBytes: 100, messages: 3_000_000, capacityBytes: 1 << 16 },
  { messageBytes: 1024, messages: 1_000_000, capacityBytes: 1 << 16 },
];
const RUNS = 3;
const RUN_DEADLINE_MS = 60_000;

async function produce(data: ProducerData): Promise<void> {
  const ring = new SpscRing(data.sab, new RingDoorbell(data.doorbell));
  const payload = Buffer.alloc(data.messageBytes, 0xab);
  const bytes = ring.bytes;
  const keepAlive = setInterval(() => undefined, 60_000); // a pending doorbell wait does not hold the worker
  for (let sequence = 0; sequence < data.messages; ) {
    const offset = ring.reserve(data.messageBytes);
    if (offset < 0) {
      await ring.waitForSpace(1000);
      continue;
    }
    payload.writeUInt32LE(sequence >>> 0, 0);
    payload.copy(bytes, offset);
    ring.publish();
    sequence++;
  }
  clearInterval(keepAlive);
}

async function runOnce(benchCase: Case): Promise<{ seconds: number; wakeups: number; waits: number }> {
  const sab = SpscRing.allocate(benchCase.capacityBytes);
  const { port1, port2 } = new MessageChannel();
  const ring = new SpscRing(sab, new RingDoorbell(port1));
  const bytes = ring.bytes;
  const producerData: ProducerData = { sab, doorbell: port2, messageBytes: benchCase.messageBytes, messages: benchCase.messages };
  const worker = new Worker(new URL(import.meta.url), { workerData: producerData, transferList: [port2] });
  const failed = new Promise<never>((_, reject) => worker.once('error', reject));
  void failed.catch(() => undefined);
  // Timing starts at the first message so worker start-up is not counted.
  await Promise.race([ring.waitForData(RUN_DEADLINE_MS), failed]);
  const started = process.hrtime.bigint();
  const deadline = Date.now() + RUN_DEADLINE_MS;
  let sequence = 0;
  while (sequence < benchCase.messages) {
    const offset = ring.peek();
    if (offset < 0) {
      if (Date.now() > deadline) throw new Error(`deadline passed at message ${sequence}`);
      await ring.waitForData(1000);
      continue;
    }
    if (bytes.readUInt32LE(offset) !== sequence >>> 0) throw new Error(`out of order at ${sequence}`);
    ring.release();
    sequence++;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await worker.terminate();
  const stats = ring.stats();
  return { seconds, wakeups: stats.consumerWakeups + stats.producerWakeups, waits: stats.consumerWaits + stats.producerWaits };
}

/** Both roles on one thread: the ring's own CPU cost per message, without cross-core traffic. */
function sameThreadNanosPerMessage(messageBytes: number, messages: number): number {
  const sab = SpscRing.allocate(1 << 20);
  const [producerBell, consumerBell] = RingDoorbell.pair();
  const producer = new SpscRing(sab, producerBell);
  const consumer = new SpscRing(sab, consumerBell);
  const payload = Buffer.alloc(messageBytes, 0xab);
  const started = process.hrtime.bigint();
  for (let sequence = 0; sequence < messages; sequence++) {
    payload.writeUInt32LE(sequence >>> 0, 0);
    payload.copy(producer.bytes, producer.reserve(messageBytes));
    producer.publish();
    if (consumer.bytes.readUInt32LE(consumer.peek()) !== sequence >>> 0) throw new Error(`out of order at ${sequence}`);
    consumer.release();
  }
  return Number(process.hrtime.bigint() - started) / messages;
}

async function main(): Promise<void> {
  console.log(`SpscRing throughput (node ${process.version}, ${RUNS} runs, median shown)`);
  for (const messageBytes of [100, 1024]) {
    const runs = Array.from({ length: RUNS }, () => sameThreadNanosPerMessage(messageBytes, 2_000_000)).sort((a, b) => a - b);
    console.log(`${String(messageBytes).padStart(5)} B msgs, same thread: ${runs[Math.floor(RUNS / 2)]!.toFixed(0)} ns/msg for all four calls`);
  }
  for (const benchCase of CASES) {
    const runs = [];
    for (let run = 0; run < RUNS; run++) runs.push(await runOnce(benchCase));
    runs.sort((a, b) => a.seconds - b.seconds);
    const median = runs[Math.floor(RUNS / 2)]!;
    const messagesPerSecond = benchCase.messages / median.seconds;
    const megabytesPerSecond = (messagesPerSecond * benchCase.messageBytes) / 1e6;
    console.log(
      `${String(benchCase.messageBytes).padStart(5)} B msgs, ring ${benchCase.capacityBytes >> 10} KiB: ` +
        `${(messagesPerSecond / 1e6).toFixed(2)} M msgs/s, ${megabytesPerSecond.toFixed(0)} MB/s ` +
        `(runs ${runs.map((r) => (benchCase.messages / r.seconds / 1e6).toFixed(2)).join('/')} M/s; ` +
        `waits ${median.waits}, wakeups ${median.wakeups})`,
    );
  }
}

if (isMainThread) await main();
else await produce(workerData as ProducerData);
