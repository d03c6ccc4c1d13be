// Wake-ups between the two ends of one SpscRing, carried as one-number MessagePort messages. The ring
// decides when a wake-up is owed (its waiting flags); this only delivers it. Atomics.waitAsync and
// Atomics.notify did that job before, but V8 serialises every waitAsync, notify and waiter
// resolution in the whole process on one global mutex: with the network thread and the shards
// contending for 2 cores, perf sched showed shards blocked on it ~7% of the time, up to 5.7 ms at
// once. A port is a mutex shared by its two ends only, and a wake-up is cheaper: with main
// ping-ponging 2 workers, 1.66x the round trips/s at 0.58x the CPU, p50 36 us vs 83 us
// (node dist/bench/micro/wake.js).
// Threads: each end is used by one thread. Ports are unref'd: like a pending waitAsync, a waiting
// doorbell does not keep its thread's event loop alive.
// Bounds: at most one pending wait per signal (a second is a caller bug and throws); a message
// arriving with nobody waiting is dropped (the ring re-checks its indices after every wake, so a
// late or spare wake-up is harmless).
import { MessageChannel, type MessagePort } from 'node:worker_threads';

/** What the other end rang for: data published (wakes a consumer) or space released (wakes a producer). */
export const RingSignal = { data: 0, space: 1 } as const;
export type RingSignal = (typeof RingSignal)[keyof typeof RingSignal];

interface Waiter {
  resolve(): void;
  timer: NodeJS.Timeout | null;
}

export class RingDoorbell {
  /** Both ends of one ring in this thread: separate producer and consumer SpscRing objects (tests). */
  static pair(): [RingDoorbell, RingDoorbell] {
    const { port1, port2 } = new MessageChannel();
    return [new RingDoorbell(port1), new RingDoorbell(port2)];
  }

  /** One end ringing itself: a ring whose producer and consumer are the same SpscRing object. */
  static loopback(): RingDoorbell {
    const { port1, port2 } = new MessageChannel();
    return new RingDoorbell(port1, port2);
  }

  private readonly waiters: [Waiter | null, Waiter | null] = [null, null];

  /** `send` reaches the other end; wake-ups for this end arrive on `receive` (the same port across threads). */
  constructor(
    private readonly send: MessagePort,
    private readonly receive: MessagePort = send,
  ) {
    receive.on('message', this.onMessage);
    receive.unref();
    if (send !== receive) send.unref();
  }

  ring(signal: RingSignal): void {
    this.send.postMessage(signal);
  }

  /** Resolves on the next ring of `signal` from the other end, or after timeoutMs. One pending wait per signal. */
  wait(signal: RingSignal, timeoutMs: number): Promise<void> {
    if (this.waiters[signal] !== null) throw new Error(`RingDoorbell.wait: signal ${signal} already has a waiter`);
    return new Promise<void>((resolve) => {
      const waiter: Waiter = { resolve, timer: null };
      if (Number.isFinite(timeoutMs)) waiter.timer = setTimeout(() => this.wake(signal), Math.max(0, timeoutMs));
      this.waiters[signal] = waiter;
    });
  }

  close(): void {
    this.receive.off('message', this.onMessage);
    this.send.close();
    if (this.receive !== this.send) this.receive.close();
  }

  private readonly onMessage = (signal: unknown): void => {
    if (signal === RingSignal.data || signal === RingSignal.space) this.wake(signal);
  };

  private wake(signal: RingSignal): void {
    const waiter = this.waiters[signal];
    if (waiter === null) return;
    this.waiters[signal] = null;
    if (waiter.timer !== null) clearTimeout(waiter.timer);
    waiter.resolve();
  }
}
