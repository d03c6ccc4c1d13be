// A growable ring-buffer FIFO for the parallel consumer's queues (router lanes and ready list).
// Runs on the consumer's thread; pure data structure. Invariants: capacity is a power of two and
// only grows (to the peak length seen), so steady-state push/shift allocate nothing; shifted
// slots are cleared so the queue never keeps a consumed item alive.

export class Fifo<T> {
  private items: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(initialCapacity = 4) {
    let capacity = 1;
    while (capacity < initialCapacity) capacity *= 2;
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) & (this.items.length - 1)] = item;
    this.count++;
  }

  /** The item `shift` would return, left in place. */
  peek(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.count--;
    return item;
  }

  private grow(): void {
    const old = this.items;
    const next = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = old[(this.head + i) & (old.length - 1)];
    this.items = next;
    this.head = 0;
  }
}
