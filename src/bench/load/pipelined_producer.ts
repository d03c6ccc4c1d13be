// One raw Produce connection with K pre-built request frames ("slots") for the load generators
// (bench driver, main thread). The owner decides when a slot is sent and what happens on its
// answer (resend at once for max throughput, or return it to a free list for paced sending).
// Invariants: Kafka answers in request order, so the slots in flight form a FIFO and the oldest
// owns the next response (a mismatched correlation id ends the connection); a slot is sent again
// only after its answer arrived; at most K requests are in flight.
import { connect as netConnect } from 'node:net';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { CORRELATION_ID_AT, FrameSplitter, readProduceAnswer } from './produce_wire.js';
import type { ProduceAnswer, ProduceFrame } from './produce_wire.js';

const MAX_RESPONSE_BYTES = 1024 * 1024;

/** Called for each answer with the slot it belongs to and the latency since its write. */
export type AnswerHandler = (slot: number, answer: ProduceAnswer, latencyMs: number, now: number) => void;

export function openSocket(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connect to ${host}:${port} timed out`));
    }, timeoutMs);
    // Only this connect attempt's handler goes once connected; errors after that are the caller's to handle.
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
    socket.once('error', onError);
  });
}

export class PipelinedProducer {
  /** Settles when end() is called or the connection fails. */
  readonly done: Promise<void>;
  private readonly order: Int32Array;
  private head = 0;
  private count = 0;
  private readonly sentAt: Float64Array;
  private readonly correlation: Int32Array;
  private nextCorrelation = 0;
  private readonly splitter = new FrameSplitter(MAX_RESPONSE_BYTES);
  private settle: ((err: Error | null) => void) | null = null;

  constructor(
    private readonly socket: Socket,
    readonly frames: readonly ProduceFrame[],
    private readonly version: number,
    private readonly onAnswer: AnswerHandler,
  ) {
    this.order = new Int32Array(frames.length);
    this.sentAt = new Float64Array(frames.length);
    this.correlation = new Int32Array(frames.length);
    this.done = new Promise((resolve, reject) => {
      this.settle = (err) => (err === null ? resolve() : reject(err));
    });
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => {
      try {
        this.splitter.push(data, (frame) => this.onFrame(frame));
      } catch (err) {
        this.end(err instanceof Error ? err : new Error(String(err)));
      }
    });
    socket.on('error', (err) => this.end(err));
    socket.on('close', () => this.end(this.count > 0 ? new Error('connection closed with requests in flight') : null));
  }

  get inFlight(): number {
    return this.count;
  }

  /** Whether end() ran (or the connection failed): nothing more may be sent. */
  get ended(): boolean {
    return this.settle === null;
  }

  /** Milliseconds the oldest request in flight has waited, or 0. */
  oldestWaitMs(now: number): number {
    return this.count === 0 ? 0 : now - (this.sentAt[this.order[this.head] as number] as number);
  }

  /** Writes slot's frame with a fresh correlation id. The slot must not be in flight. */
  send(slot: number, now: number): void {
    const f = this.frames[slot] as ProduceFrame;
    const id = this.nextCorrelation;
    this.nextCorrelation = (id + 1) & 0x7fffffff;
    f.frame.writeInt32BE(id, CORRELATION_ID_AT);
    this.correlation[slot] = id;
    this.sentAt[slot] = now;
    this.order[(this.head + this.count) % this.order.length] = slot;
    this.count++;
    this.socket.write(f.frame);
  }

  /** Closes the socket and settles `done` (first call wins). */
  end(err: Error | null): void {
    const s = this.settle;
    this.settle = null;
    this.socket.destroy();
    if (s !== null) s(err);
  }

  private onFrame(frame: Buffer): void {
    if (this.count === 0) throw new Error('response with no request in flight');
    const slot = this.order[this.head] as number;
    const answer = readProduceAnswer(frame, this.version);
    if (answer.correlationId !== this.correlation[slot]) {
      throw new Error(`correlation id ${answer.correlationId}, expected ${this.correlation[slot]}`);
    }
    this.head = (this.head + 1) % this.order.length;
    this.count--;
    const now = performance.now();
    this.onAnswer(slot, answer, now - (this.sentAt[slot] as number), now);
  }
}

/** Ends every producer whose oldest request waited over timeoutMs; returns a stop function. */
export function watchTimeouts(producers: readonly PipelinedProducer[], timeoutMs: number): () => void {
  const timer = setInterval(() => {
    const now = performance.now();
    for (const p of producers) {
      if (p.oldestWaitMs(now) > timeoutMs) p.end(new Error(`a Produce request got no answer within ${timeoutMs} ms`));
    }
  }, 250);
  return () => clearInterval(timer);
}
