// Test fixtures closed after every test of a file: `closedAfterEach(make)` registers an afterEach
// hook and returns a factory whose every product that hook closes (in the order made). Test-only.
import { afterEach } from 'node:test';

export function closedAfterEach<A extends unknown[], T extends { close(): Promise<void> }>(make: (...args: A) => T): (...args: A) => T {
  const made = new Set<T>();
  afterEach(async () => {
    for (const m of made) await m.close();
    made.clear();
  });
  return (...args) => {
    const m = make(...args);
    made.add(m);
    return m;
  };
}
