// The catch-up scenario's consumer on a worker thread of its own (bench process). The bench's
// main thread has just filled the topic with our JavaScript producer, and its heap keeps what that
// left: read on the main thread, every 1 MiB Fetch response then pushed V8 into back-to-back
// mark-compacts (external memory pressure; about half the reader's time after a warm-up), and the
// figure measured the driver's heap rather than the broker. A worker's heap starts empty, as a
// consumer process's would. The worker connects, reads for `warmupMs` unmeasured (whole passes
// from offset 0), then once more from offset 0 measured, posts the result and ends.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { runCatchUp, type CatchUpOptions, type CatchUpResult } from '../../src/bench/load/catch_up.js';
import { connectClient } from '../../src/bench/load/kafka_setup.js';

export interface CatchUpRead {
  readonly host: string;
  readonly port: number;
  readonly warmupMs: number;
  /** Called on the main thread when the measured pass begins. */
  readonly onMeasuring: () => void;
  readonly read: Omit<CatchUpOptions, 'onFetched'>;
}

/** What the worker is started with: the read without its main-thread callback. */
interface ReaderData extends Omit<CatchUpRead, 'onMeasuring'> {
  readonly kind: 'catch-up-reader';
}

type ReaderMessage = { readonly measuring: true } | { readonly result: CatchUpResult };

/** Runs the catch-up read on a fresh worker thread; resolves with the measured pass. */
export function readOnWorker(o: CatchUpRead): Promise<CatchUpResult> {
  const { onMeasuring, ...read } = o;
  const data: ReaderData = { kind: 'catch-up-reader', ...read };
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  return new Promise<CatchUpResult>((resolve, reject) => {
    worker.on('message', (m: ReaderMessage) => {
      if ('measuring' in m) onMeasuring();
      else resolve(m.result);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`catch-up reader exited (${code}) before its answer`)));
  }).finally(() => void worker.terminate());
}

async function read(d: ReaderData): Promise<void> {
  const port = parentPort;
  if (port === null) return;
  const conn = await connectClient(d.host, d.port, 'sluice-bench-consumer');
  try {
    for (const until = performance.now() + d.warmupMs; performance.now() < until;) {
      await runCatchUp(conn, { ...d.read, durationMs: until - performance.now() });
    }
    port.postMessage({ measuring: true } satisfies ReaderMessage);
    port.postMessage({ result: await runCatchUp(conn, d.read) } satisfies ReaderMessage);
  } finally {
    await conn.close();
  }
}

if (!isMainThread && (workerData as ReaderData | undefined)?.kind === 'catch-up-reader') {
  await read(workerData as ReaderData);
}
