// Seeded random choices for the Raft simulation: one mulberry32 stream per purpose, so a seed
// replays exactly and the nodes' election jitter does not shift when the harness draws one more
// fault. Tests only, one thread.
import { mulberry32 } from '../../helpers/seeded_random.js';

export class SimRandom {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** A stream derived from this seed and a purpose number, independent of this one's draws. */
  static derived(seed: number, purpose: number): SimRandom {
    return new SimRandom(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(purpose + 1, 0xc2b2ae35));
  }

  float(): number {
    return this.next();
  }

  /** Uniform integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** Uniform real in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** `count` distinct items, in random order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0] as T);
    return out;
  }
}
