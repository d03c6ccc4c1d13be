// The simulated network between Raft nodes: which directed links are cut, and the per-message
// fate (dropped, duplicated, delayed, delayed a lot so it overtakes nothing in order). Delivery
// itself is an event of the simulation; a message also dies if its link is cut when it arrives.
// Tests only, one thread.
import type { Message, NodeId } from '../../../src/coordinator/raft/types.js';
import type { SimRandom } from './random.js';

export interface LinkFaults {
  minDelay: number;
  maxDelay: number;
  spikeRate: number;
  spikeFactor: number;
  dropRate: number;
  duplicateRate: number;
}

export class SimNetwork {
  /** Directed cuts, keyed `from>to`. */
  private readonly cut = new Set<string>();

  constructor(private readonly random: SimRandom, public faults: LinkFaults) {}

  connected(from: NodeId, to: NodeId): boolean {
    return !this.cut.has(`${from}>${to}`);
  }

  cutLink(from: NodeId, to: NodeId, bothWays: boolean): void {
    this.cut.add(`${from}>${to}`);
    if (bothWays) this.cut.add(`${to}>${from}`);
  }

  restoreLink(from: NodeId, to: NodeId): void {
    this.cut.delete(`${from}>${to}`);
    this.cut.delete(`${to}>${from}`);
  }

  /** Cut every link between the two sides (both directions). */
  split(sideA: readonly NodeId[], sideB: readonly NodeId[]): void {
    for (const a of sideA) for (const b of sideB) this.cutLink(a, b, true);
  }

  heal(): void {
    this.cut.clear();
  }

  describeCuts(): string {
    return this.cut.size === 0 ? 'none' : [...this.cut].sort().join(',');
  }

  /** Delays (in ticks) at which copies of `m` arrive: none when dropped, two when duplicated. */
  fate(m: Message): number[] {
    if (!this.connected(m.from, m.to)) return [];
    const f = this.faults;
    if (f.dropRate > 0 && this.random.chance(f.dropRate)) return [];
    const copies = f.duplicateRate > 0 && this.random.chance(f.duplicateRate) ? 2 : 1;
    const delays: number[] = [];
    for (let i = 0; i < copies; i++) {
      const base = this.random.between(f.minDelay, f.maxDelay);
      delays.push(f.spikeRate > 0 && this.random.chance(f.spikeRate) ? base * f.spikeFactor : base);
    }
    return delays;
  }
}
