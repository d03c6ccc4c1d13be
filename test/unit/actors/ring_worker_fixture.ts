// Worker side of ring_buffer.test.ts's cross-thread tests, plus the message format both sides
// share: [sequence u32][checksum u32][body], length and body derived from (seed, sequence), so
// the consumer can check order, length and content without being told what was sent.
// Thread: a worker when started with RingFixtureData; imported on the main thread for the format.
// Loaded as a plain module (e.g. by a test runner) it does nothing.
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { RingStats } from '../../../src/actors/ring_buffer.js';
import { SpscRing } from '../../../src/actors/ring_buffer.js';
import { RingDoorbell } from '../../../src/actors/ring_doorbell.js';

export interface RingFixtureData {
  readonly fixture: 'ring';
  readonly sab: SharedArrayBuffer;
  /** The worker's end of sab's doorbell (transferred). */
  readonly doorbell: MessagePort;
  /** echo: consume from sab and publish each message unchanged on replySab. */
  readonly role: 'produce' | 'consume' | 'echo';
  readonly replySab: SharedArrayBuffer | null;
  readonly replyDoorbell: MessagePort | null;
  readonly messages: number;
  readonly seed: number;
  readonly startDelayMs: number;
  /** Consumer only: pause 1 ms after every this many messages (0: never), to force backpressure. */
  readonly stallEvery: number;
  readonly deadlineMs: number;
}

export interface RingFixtureResult {
  readonly messages: number;
  readonly errors: readonly string[];
  readonly stats: RingStats;
}

const MESSAGE_HEADER_BYTES = 8;
const MAX_ERRORS = 10;
/**
 * Every wait is given this timeout although the other side never pauses this long, so a wait
 * that runs out means a lost wake-up; it is reported as an error instead of hanging the test.
 */
export const LOST_WAKEUP_MS = 2000;

/** xorshift32 step; never maps a non-zero state to zero. */
function nextRandom(state: number): number {
  let x = state;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x | 0;
}

function messageState(seed: number, sequence: number): number {
  return nextRandom((Math.imul(sequence + 1, 0x9e3779b1) ^ seed) | 1);
}

/** Mostly small messages, some medium, a few near maxMessageBytes so pads and full rings occur. */
export function messageLength(seed: number, sequence: number, maxMessageBytes: number): number {
  const r = messageState(seed, sequence) >>> 0;
  const bucket = r % 100;
  const spread = r >>> 8;
  if (bucket < 80) return MESSAGE_HEADER_BYTES + (spread % 256);
  if (bucket < 98) return MESSAGE_HEADER_BYTES + (spread % 4096);
  return maxMessageBytes - (spread % 64);
}

/** Writes message `sequence` (length from messageLength) at bytes[offset..]. */
export function fillMessage(bytes: Buffer, offset: number, length: number, seed: number, sequence: number): void {
  let state = messageState(seed, sequence);
  let checksum = 0;
  for (let i = offset + MESSAGE_HEADER_BYTES; i < offset + length; i++) {
    state = nextRandom(state);
    bytes[i] = state & 0xff;
    checksum = (Math.imul(checksum, 31) + (state & 0xff)) | 0;
  }
  bytes.writeUInt32LE(sequence >>> 0, offset);
  bytes.writeInt32LE(checksum, offset + 4);
}

/** null if bytes[offset, offset+length) is intact message `sequence`, else what is wrong. */
export function checkMessage(
  bytes: Buffer,
  offset: number,
  length: number,
  seed: number,
  sequence: number,
  maxMessageBytes: number,
): string | null {
  const expectedLength = messageLength(seed, sequence, maxMessageBytes);
  if (length !== expectedLength) return `message ${sequence}: length ${length}, expected ${expectedLength}`;
  const got = bytes.readUInt32LE(offset);
  if (got !== sequence >>> 0) return `message ${sequence}: sequence field ${got}`;
  let checksum = 0;
  for (let i = offset + MESSAGE_HEADER_BYTES; i < offset + length; i++) {
    checksum = (Math.imul(checksum, 31) + bytes[i]!) | 0;
  }
  if (checksum !== bytes.readInt32LE(offset + 4)) return `message ${sequence}: checksum mismatch`;
  return null;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one wait and records it if it ran out (see LOST_WAKEUP_MS). */
export async function awaitWake(wait: (timeoutMs: number) => Promise<void>, errors: string[], what: string): Promise<void> {
  const started = Date.now();
  await wait(LOST_WAKEUP_MS);
  if (Date.now() - started >= LOST_WAKEUP_MS && errors.length < MAX_ERRORS) errors.push(`${what} timed out: lost wake-up`);
}

async function produce(ring: SpscRing, data: RingFixtureData): Promise<RingFixtureResult> {
  const deadline = Date.now() + data.deadlineMs;
  const errors: string[] = [];
  let sequence = 0;
  while (sequence < data.messages && Date.now() < deadline) {
    const length = messageLength(data.seed, sequence, ring.maxMessageBytes);
    const offset = ring.reserve(length);
    if (offset < 0) {
      await awaitWake((ms) => ring.waitForSpace(ms), errors, `waitForSpace at message ${sequence}`);
      continue;
    }
    fillMessage(ring.bytes, offset, length, data.seed, sequence);
    ring.publish();
    sequence++;
  }
  return { messages: sequence, errors, stats: ring.stats() };
}

async function consume(ring: SpscRing, data: RingFixtureData): Promise<RingFixtureResult> {
  const deadline = Date.now() + data.deadlineMs;
  const errors: string[] = [];
  let sequence = 0;
  while (sequence < data.messages && Date.now() < deadline) {
    const offset = ring.peek();
    if (offset < 0) {
      await awaitWake((ms) => ring.waitForData(ms), errors, `waitForData at message ${sequence}`);
      continue;
    }
    const error = checkMessage(ring.bytes, offset, ring.lastLength, data.seed, sequence, ring.maxMessageBytes);
    if (error !== null && errors.length < MAX_ERRORS) errors.push(error);
    ring.release();
    sequence++;
    if (data.stallEvery > 0 && sequence % data.stallEvery === 0) await sleep(1);
  }
  return { messages: sequence, errors, stats: ring.stats() };
}

async function echo(ring: SpscRing, reply: SpscRing, data: RingFixtureData): Promise<RingFixtureResult> {
  const deadline = Date.now() + data.deadlineMs;
  const errors: string[] = [];
  let sequence = 0;
  while (sequence < data.messages && Date.now() < deadline) {
    const offset = ring.peek();
    if (offset < 0) {
      await awaitWake((ms) => ring.waitForData(ms), errors, `echo waitForData at message ${sequence}`);
      continue;
    }
    const replyOffset = reply.reserve(ring.lastLength);
    if (replyOffset < 0) {
      await awaitWake((ms) => reply.waitForSpace(ms), errors, `echo waitForSpace at message ${sequence}`);
      continue;
    }
    ring.bytes.copy(reply.bytes, replyOffset, offset, offset + ring.lastLength);
    reply.publish();
    ring.release();
    sequence++;
  }
  return { messages: sequence, errors, stats: ring.stats() };
}

function run(ring: SpscRing, data: RingFixtureData): Promise<RingFixtureResult> {
  if (data.role === 'produce') return produce(ring, data);
  if (data.role === 'consume') return consume(ring, data);
  if (data.replySab === null || data.replyDoorbell === null) throw new TypeError('echo needs replySab and replyDoorbell');
  return echo(ring, new SpscRing(data.replySab, new RingDoorbell(data.replyDoorbell)), data);
}

function isFixtureData(value: unknown): value is RingFixtureData {
  return typeof value === 'object' && value !== null && (value as { fixture?: unknown }).fixture === 'ring';
}

if (!isMainThread && parentPort !== null && isFixtureData(workerData)) {
  const data = workerData;
  const port = parentPort;
  // A pending doorbell wait does not keep a worker alive; this timer does.
  const keepAlive = setInterval(() => undefined, 60_000);
  await sleep(data.startDelayMs);
  const ring = new SpscRing(data.sab, new RingDoorbell(data.doorbell));
  const result = await run(ring, data);
  clearInterval(keepAlive);
  port.postMessage(result);
}
