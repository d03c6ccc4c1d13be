// Earliest-deadline queue over group ids: tells the coordinator which groups have timer work due.
// Pure data structure on the coordinator's shard. Invariant: `current` holds each id's live
// deadline; heap slots that disagree with it are stale and skipped; the heap is rebuilt when
// stale slots outnumber live ones, so its size stays within 2x the number of scheduled ids.

interface Slot {
  readonly at: number;
  readonly id: string;
}

export class DeadlineQueue {
  private readonly current = new Map<string, number>();
  private heap: Slot[] = [];

  set(id: string, at: number | null): void {
    if (at === null) {
      this.current.delete(id);
    } else {
      if (this.current.get(id) === at) return;
      this.current.set(id, at);
      this.push({ at, id });
    }
    if (this.heap.length > 2 * this.current.size + 64) this.rebuild();
  }

  peek(): number | null {
    this.dropStale();
    return this.heap.length > 0 ? this.heap[0]!.at : null;
  }

  /** Removes and returns every id due at `now`, earliest first. */
  popDue(now: number): string[] {
    const due: string[] = [];
    for (;;) {
      this.dropStale();
      const top = this.heap[0];
      if (top === undefined || top.at > now) return due;
      this.pop();
      this.current.delete(top.id);
      due.push(top.id);
    }
  }

  private dropStale(): void {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || this.current.get(top.id) === top.at) return;
      this.pop();
    }
  }

  private rebuild(): void {
    this.heap = [];
    for (const [id, at] of this.current) this.push({ at, id });
  }

  private push(slot: Slot): void {
    const h = this.heap;
    h.push(slot);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.at <= slot.at) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = slot;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && h[r]!.at < h[l]!.at ? r : l;
      if (h[c]!.at >= last.at) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = last;
  }
}
