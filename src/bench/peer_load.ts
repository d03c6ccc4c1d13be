// Paced publish and consume against a peer (bench driver, main thread), the peers' side of what
// e2e_latency.ts does for Sluice: message i is due at i / rate and stamped with that time (float64
// at the start of its payload), so a late send counts in its latency; a 1 ms timer sends every
// due message while fewer than maxInflight wait for their ack; the consumer reads each stamp back.
// Events go to an E2eObserver, as Sluice's do, so both fill the same OMB windows.
// Bounds: sending stops at `messages` or after `durationMs`; the run ends when every acked
// message was consumed or `drainTimeoutMs` after the last ack (at most maxInflight in flight).
import { performance } from 'node:perf_hooks';
import type { E2eObserver } from './load/e2e_latency.js';
import type { PeerClient } from './peer_servers.js';

export interface PacedPeerOptions {
  readonly ratePerSec: number;
  readonly messageBytes: number;
  readonly messages: number;
  readonly durationMs: number;
  readonly maxInflight: number;
  readonly drainTimeoutMs: number;
  /** false: publish only (a backlog for a later drain). */
  readonly consume: boolean;
}

export interface PacedPeerResult {
  readonly sent: number;
  readonly acked: number;
  readonly failed: number;
  readonly consumed: number;
  readonly achievedRate: number;
}

const STAMP_BYTES = 8;

export function runPacedPeer(client: PeerClient, o: PacedPeerOptions, observer: E2eObserver): Promise<PacedPeerResult> {
  if (o.messageBytes < STAMP_BYTES) throw new RangeError(`peer messages need at least ${STAMP_BYTES} bytes for the stamp`);
  const template = Buffer.alloc(o.messageBytes, 0x78);
  let sent = 0;
  let acked = 0;
  let failed = 0;
  let consumed = 0;
  let stoppedAt = -1;
  const startedAt = performance.now();
  if (o.consume) {
    client.consume((payload) => {
      const now = performance.now();
      consumed++;
      if (payload.length >= STAMP_BYTES) observer.consumed(now, now - payload.readDoubleLE(0));
    });
  }
  return new Promise((resolve) => {
    const finish = (): void => {
      const seconds = Math.max(1e-6, ((stoppedAt < 0 ? performance.now() : stoppedAt) - startedAt) / 1000);
      resolve({ sent, acked, failed, consumed, achievedRate: sent / seconds });
    };
    const tick = (): void => {
      const now = performance.now();
      const elapsed = now - startedAt;
      if (stoppedAt < 0 && (elapsed >= o.durationMs || sent >= o.messages)) stoppedAt = now;
      if (stoppedAt < 0) {
        const due = Math.min(o.messages, Math.floor((elapsed * o.ratePerSec) / 1000) + 1);
        while (sent < due && sent - acked - failed < o.maxInflight) {
          const dueAt = startedAt + (sent * 1000) / o.ratePerSec;
          const payload = Buffer.from(template);
          payload.writeDoubleLE(dueAt, 0);
          const sentAt = performance.now();
          client.publish(payload, (ok) => {
            const at = performance.now();
            if (ok) {
              acked++;
              observer.acked(at, 1, at - sentAt, sentAt - dueAt);
            } else {
              failed++;
            }
          });
          sent++;
        }
        client.flush();
      } else {
        const allAnswered = acked + failed >= sent;
        const drained = !o.consume || consumed >= acked;
        if ((allAnswered && drained) || now - stoppedAt > o.drainTimeoutMs) {
          finish();
          return;
        }
      }
      setTimeout(tick, 1);
    };
    tick();
  });
}
