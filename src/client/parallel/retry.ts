// Runs one message through the handler with retries, then the dead-letter topic: the parallel
// consumer's answer to a poison message. Consumer's thread (the handler may hand work elsewhere).
// Retries wait with full-jitter exponential backoff (client/backoff.ts). After the last retry the
// message goes to the dead-letter sink, with headers naming where it came from and why it
// failed; a sink that fails is retried with the same backoff until it succeeds or the message is
// abandoned, because marking the message complete without a copy anywhere would lose it.
// Without a dead-letter topic an exhausted message is given up (outcome 'failed', reported).
// Invariants: never throws; 'abandoned' exactly when `signal` aborted before the message was
// done (the caller then leaves it incomplete, so it is delivered again after the hand-over).
import { setTimeout as sleep } from 'node:timers/promises';
import { fullJitterDelay } from '../../protocol/backoff.js';
import type { ConsumerMessage } from '../consumer/types.js';
import type { DeadLetterHeader, DeadLetterSink, MessageHandler } from './ports.js';

export const Outcome = { done: 'done', deadLettered: 'dead-lettered', failed: 'failed', abandoned: 'abandoned' } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

export interface RetryPolicy {
  /** Retries after the first attempt; default 3. */
  readonly max?: number;
  /** Cap of the first retry's delay, doubling per retry; default 100 ms. */
  readonly backoffMs?: number;
  /** Largest delay; default 10 s. */
  readonly maxBackoffMs?: number;
}

export interface DeadLetterOptions {
  readonly topic: string;
  readonly sink: DeadLetterSink;
}

export interface RetryCounters {
  retries: number;
  handlerErrors: number;
  lastError: unknown;
}

/** Header names on a dead-lettered copy. */
export const DeadLetterHeaders = {
  topic: 'sluice.dlt.topic',
  partition: 'sluice.dlt.partition',
  offset: 'sluice.dlt.offset',
  attempts: 'sluice.dlt.attempts',
  error: 'sluice.dlt.error',
} as const;

const MAX_ERROR_CHARS = 1024;

/** Waits `ms`; false when `signal` aborted first. */
async function backoff(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

export class RetryRunner {
  private readonly max: number;
  private readonly delays: { baseMs: number; maxMs: number };

  constructor(
    private readonly handler: MessageHandler,
    policy: RetryPolicy,
    private readonly deadLetter: DeadLetterOptions | null,
    private readonly counters: RetryCounters,
  ) {
    this.max = policy.max ?? 3;
    this.delays = { baseMs: policy.backoffMs ?? 100, maxMs: policy.maxBackoffMs ?? 10_000 };
    if (!Number.isSafeInteger(this.max) || this.max < 0) throw new RangeError('retries.max must be a non-negative integer');
  }

  async run(message: ConsumerMessage, signal: AbortSignal): Promise<Outcome> {
    let error: unknown;
    for (let attempt = 0; attempt <= this.max; attempt++) {
      if (attempt > 0) {
        this.counters.retries++;
        if (!(await backoff(fullJitterDelay(attempt - 1, this.delays), signal))) return Outcome.abandoned;
      }
      try {
        await this.handler(message, signal);
        return signal.aborted ? Outcome.abandoned : Outcome.done;
      } catch (err) {
        if (signal.aborted) return Outcome.abandoned;
        error = err;
        this.counters.handlerErrors++;
        this.counters.lastError = err;
      }
    }
    if (this.deadLetter === null) return Outcome.failed;
    return this.sendToDeadLetter(this.deadLetter, message, error, signal);
  }

  private async sendToDeadLetter(dl: DeadLetterOptions, message: ConsumerMessage, error: unknown, signal: AbortSignal): Promise<Outcome> {
    const record = { key: message.key, value: message.value, headers: deadLetterHeaders(message, error, this.max + 1) };
    for (let attempt = 0; ; attempt++) {
      try {
        await dl.sink.send(dl.topic, record);
        return Outcome.deadLettered;
      } catch (err) {
        this.counters.lastError = err;
        if (!(await backoff(fullJitterDelay(attempt, this.delays), signal))) return Outcome.abandoned;
      }
    }
  }
}

function deadLetterHeaders(message: ConsumerMessage, error: unknown, attempts: number): DeadLetterHeader[] {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const own: DeadLetterHeader[] = [
    { key: DeadLetterHeaders.topic, value: Buffer.from(message.topic) },
    { key: DeadLetterHeaders.partition, value: Buffer.from(String(message.partition)) },
    { key: DeadLetterHeaders.offset, value: Buffer.from(String(message.offset)) },
    { key: DeadLetterHeaders.attempts, value: Buffer.from(String(attempts)) },
    { key: DeadLetterHeaders.error, value: Buffer.from(text.slice(0, MAX_ERROR_CHARS)) },
  ];
  return [...message.headers.map((h) => ({ key: h.key, value: h.value })), ...own];
}
