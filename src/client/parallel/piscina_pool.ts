// CPU-bound handlers for the parallel consumer: each message runs in a piscina worker thread,
// the consumer's thread only routes and tracks. Runs on the consumer's thread (the pool owns the
// workers). The worker module's default export receives a PiscinaMessage (a structured-clone
// copy: key/value arrive as Uint8Array) and resolves when done; a throw is retried like any
// handler failure. An abandoned message aborts its task (piscina ends that worker).
// Invariants: piscina's own queue stays bounded by the parallel consumer's concurrency (the
// consumer never has more tasks running than that), so `maxQueue` is not needed here.
import { Piscina } from 'piscina';
import type { ConsumerMessage } from '../consumer/types.js';
import type { MessageHandler } from './ports.js';

/** What a piscina worker receives for one message. */
export interface PiscinaMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: Uint8Array | null;
  readonly value: Uint8Array | null;
  readonly headers: readonly { readonly key: string; readonly value: Uint8Array | null }[];
}

export interface PiscinaHandlerOptions {
  /** Absolute path or file URL of the worker module. */
  readonly filename: string;
  /** Default: piscina's (available parallelism). */
  readonly maxThreads?: number;
  readonly minThreads?: number;
  /** Handed to each worker (piscina's `workerData`), e.g. its settings. */
  readonly workerData?: unknown;
}

export interface PiscinaHandler {
  readonly handler: MessageHandler;
  readonly threads: number;
  close(): Promise<void>;
}

function toTask(m: ConsumerMessage): PiscinaMessage {
  return { topic: m.topic, partition: m.partition, offset: m.offset, timestamp: m.timestamp, key: m.key, value: m.value, headers: m.headers };
}

export function createPiscinaHandler(options: PiscinaHandlerOptions): PiscinaHandler {
  const pool = new Piscina<PiscinaMessage, unknown>({
    filename: options.filename,
    ...(options.maxThreads !== undefined ? { maxThreads: options.maxThreads } : {}),
    ...(options.minThreads !== undefined ? { minThreads: options.minThreads } : {}),
    ...(options.workerData !== undefined ? { workerData: options.workerData } : {}),
  });
  const handler: MessageHandler = async (message, signal) => {
    await pool.run(toTask(message), { signal });
  };
  return { handler, threads: pool.maxThreads, close: () => pool.destroy() };
}
