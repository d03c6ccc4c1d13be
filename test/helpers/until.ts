// Test helper: polls an asynchronous probe until its value passes a check, for end-to-end tests
// that wait on what brokers report (metadata, offsets, replica state). Test's main thread.
import assert from 'node:assert/strict';

/** Probes every 100 ms until `ok(value)`, failing with `what` and the last value after `ms`. */
export async function until<T>(what: string, ms: number, probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`${what} after ${ms} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
