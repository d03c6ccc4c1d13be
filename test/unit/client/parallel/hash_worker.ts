// A piscina worker module for the parallel consumer's piscina-mode test and bench (runs on a
// piscina worker thread): hashes the message value `rounds` times (workerData, default 200), as
// a CPU-bound handler would, and refuses to run on the main thread so the test proves the work
// left it.
import { createHash } from 'node:crypto';
import { isMainThread, workerData } from 'node:worker_threads';
import type { PiscinaMessage } from '../../../../src/client/parallel/piscina_pool.js';

const settings = workerData as { rounds?: number } | null | undefined;
const rounds = settings?.rounds ?? 200;

export default function hash(task: PiscinaMessage): string {
  if (isMainThread) throw new Error('hash_worker must run on a worker thread');
  let digest: Uint8Array = task.value ?? new Uint8Array(0);
  for (let i = 0; i < rounds; i++) digest = createHash('sha256').update(digest).digest();
  return Buffer.from(digest).toString('hex');
}
