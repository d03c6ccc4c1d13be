// Makes the calling thread's V8 scavenge its young generation: tests of GC pause figures need
// pauses to happen, without --expose-gc.

/** Allocates enough short-lived objects (about 100 MB) for several scavenges of this thread's heap. */
export function churnYoungGeneration(): void {
  let keep: object[] = [];
  for (let i = 0; i < 2_000_000; i++) {
    keep.push({ i });
    if (keep.length > 1000) keep = [];
  }
}
