// Cross-thread wake-up cost, the primitive under every ring sleep: the main thread ping-pongs with
// WORKERS workers at once (as the network thread does with its shards), each hop waking a thread
// that is asleep. Two mechanisms: RingDoorbell (MessagePort pairs, what the rings use) and the
// Atomics.waitAsync/notify reference they replaced, whose every call in the process shares one
// V8 mutex. Prints round trips/s, p50/p99 round-trip latency and process CPU per round trip
// (both ends), and the ratio.
// Run: node dist/bench/micro/wake.js [roundTripsPerWorker]   (this file is also the worker)
// Bounded: a fixed count per worker and a deadline per run.
import { performance } from 'node:perf_hooks';
import { MessageChannel, Worker, isMainThread, workerData, type MessagePort } from 'node:worker_threads';
import { build } from 'hdr-histogram-js';
import { RingDoorbell, RingSignal } from '../../src/actors/ring_doorbell.js';

type Mode = 'doorbell' | 'atomics';

interface PeerData {
  readonly mode: Mode;
  readonly counters: SharedArrayBuffer;
  readonly port: MessagePort;
}

const WORKERS = 2;
const RUNS = 3;
const DEADLINE_MS = 30_000;
// Slot 0: pings sent by main; slot 1: pongs sent by the worker.
const PING = 0;
const PONG = 1;

const atomicsAsync = Atomics as typeof Atomics & {
  waitAsync(view: Int32Array, index: number, value: number): { async: false } | { async: true; value: Promise<unknown> };
};

/** One end of a ping-pong link, either mechanism. */
class Link {
  private readonly view: Int32Array;
  private readonly bell: RingDoorbell | null;
  private seen = 0;

  constructor(mode: Mode, counters: SharedArrayBuffer, port: MessagePort, private readonly sendSlot: number) {
    this.view = new Int32Array(counters);
    this.bell = mode === 'doorbell' ? new RingDoorbell(port) : null;
  }

  send(): void {
    Atomics.add(this.view, this.sendSlot, 1);
    if (this.bell) this.bell.ring(RingSignal.data);
    else Atomics.notify(this.view, this.sendSlot);
  }

  /** Resolves once the other end has sent since the last receive. */
  async receive(): Promise<void> {
    const slot = this.sendSlot === PING ? PONG : PING;
    for (;;) {
      const now = Atomics.load(this.view, slot);
      if (now !== this.seen) {
        this.seen = now;
        return;
      }
      if (this.bell) {
        await this.bell.wait(RingSignal.data, Infinity);
      } else {
        const r = atomicsAsync.waitAsync(this.view, slot, now);
        if (r.async) await r.value;
      }
    }
  }

  close(): void {
    this.bell?.close();
  }
}

async function peer(data: PeerData): Promise<void> {
  setInterval(() => undefined, 60_000); // neither mechanism holds the loop; terminate() ends this worker
  const link = new Link(data.mode, data.counters, data.port, PONG);
  for (;;) {
    await link.receive();
    link.send();
  }
}

interface Result {
  readonly roundTripsPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly cpuUsPerRoundTrip: number;
}

async function runOnce(mode: Mode, perWorker: number): Promise<Result> {
  const latency = build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000_000, numberOfSignificantValueDigits: 3 });
  const keepAlive = setInterval(() => undefined, 60_000);
  const workers: Worker[] = [];
  const links: Link[] = [];
  for (let i = 0; i < WORKERS; i++) {
    const counters = new SharedArrayBuffer(8);
    const { port1, port2 } = new MessageChannel();
    const data: PeerData = { mode, counters, port: port2 };
    workers.push(new Worker(new URL(import.meta.url), { workerData: data, transferList: [port2] }));
    links.push(new Link(mode, counters, port1, PING));
  }
  // One warm-up round trip per link, so worker start-up is not measured.
  await Promise.all(links.map(async (l) => { l.send(); await l.receive(); }));
  const deadline = performance.now() + DEADLINE_MS;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let total = 0;
  await Promise.all(links.map(async (l) => {
    for (let i = 0; i < perWorker && performance.now() < deadline; i++) {
      const sent = performance.now();
      l.send();
      await l.receive();
      latency.recordValue(Math.max(1, Math.round((performance.now() - sent) * 1000)));
      total++;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  for (const w of workers) await w.terminate();
  for (const l of links) l.close();
  clearInterval(keepAlive);
  return {
    roundTripsPerSec: total / seconds,
    p50Us: latency.getValueAtPercentile(50),
    p99Us: latency.getValueAtPercentile(99),
    cpuUsPerRoundTrip: (cpu.user + cpu.system) / total,
  };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

async function main(): Promise<void> {
  const perWorker = Number(process.argv[2] ?? 20_000);
  const summary = new Map<Mode, Result>();
  for (const mode of ['doorbell', 'atomics'] as const) {
    const runs: Result[] = [];
    for (let r = 0; r < RUNS; r++) runs.push(await runOnce(mode, perWorker));
    const m = (f: (r: Result) => number): number => median(runs.map(f));
    const result = { roundTripsPerSec: m((r) => r.roundTripsPerSec), p50Us: m((r) => r.p50Us), p99Us: m((r) => r.p99Us), cpuUsPerRoundTrip: m((r) => r.cpuUsPerRoundTrip) };
    summary.set(mode, result);
    console.log(`${mode.padEnd(8)}  ${Math.round(result.roundTripsPerSec)} round trips/s  p50 ${result.p50Us} us  p99 ${result.p99Us} us  ${result.cpuUsPerRoundTrip.toFixed(1)} CPU us/round trip  (median of ${RUNS}, ${WORKERS} workers x ${perWorker})`);
  }
  const d = summary.get('doorbell')!;
  const a = summary.get('atomics')!;
  console.log(`doorbell/atomics: ${(d.roundTripsPerSec / a.roundTripsPerSec).toFixed(2)}x round trips/s, ${(d.cpuUsPerRoundTrip / a.cpuUsPerRoundTrip).toFixed(2)}x CPU per round trip`);
}

if (isMainThread) await main();
else await peer(workerData as PeerData);
