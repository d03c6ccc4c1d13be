// The V8 heap settings shard workers start with (main thread, before it spawns the first one).
// A shard allocates a few KiB per request, nearly all of it dead by the next scavenge.
// Old generation: V8, when no initial old-generation size is configured, keeps lowering its first
// old-generation limit while few objects survive scavenges, to just above what is live: a shard
// serving 100k msg/s then mark-compacted about five times a second (80 in 15 s; 7-14 ms of marking
// and pause each, where the end-to-end p99 of 13 ms came from), and one at 20k msg/s once every
// ~0.8 s. With the size configured the limit grows from it by V8's usual factors instead: 0
// mark-compacts in 15 s and 7 in 40 s at the same 100k. The cost is up to that much more old space
// per shard before its first mark-compact.
// Young generation: V8 grows a busy thread's semi-spaces to 16 MiB. A shard serving 100k msg/s
// (librdkafka e2e, linger 0, 1 KiB, acks=1, --flush always) on this 2-vCPU VM then scavenged
// 85-116 times per 15 s, pausing 2.1-3.3 ms each (mean per run), above the 2 ms own-delay target
// by itself; with 8 MiB semi-spaces 132-190 times at 0.9-1.9 ms, less scavenge time in all. The
// e2e p99 was lower in 9 of 11 alternating pairs over three sittings (medians 14.6 against
// 23.1 ms); at 20k msg/s nothing changed. 4 MiB shortened the pauses little more (0.8-1.0 ms) at
// twice the scavenges.
// Both are process-wide V8 flags, read when an isolate is made: set here, they apply to every
// worker spawned afterwards; main's own heap, made before, keeps V8's defaults. A value the
// operator gave node (execArgv or NODE_OPTIONS) is left alone.
import { setFlagsFromString } from 'node:v8';

/** Old generation (MiB) a shard's heap may reach before its first mark-compact. */
export const SHARD_INITIAL_OLD_SPACE_MB = 64;
/** The largest semi-space (MiB) of a shard's young generation. */
export const SHARD_MAX_SEMI_SPACE_MB = 8;

const FLAGS: ReadonlyArray<readonly [name: string, mb: number]> = [
  ['initial-old-space-size', SHARD_INITIAL_OLD_SPACE_MB],
  ['max-semi-space-size', SHARD_MAX_SEMI_SPACE_MB],
];

/** The V8 flags to set before spawning shard workers: each one node was not given already. */
export function shardHeapFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const args = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map((arg) => arg.replace(/_/g, '-'));
  return FLAGS.filter(([name]) => !args.some((arg) => arg.startsWith(`--${name}`))).map(([name, mb]) => `--${name}=${mb}`);
}

let configured = false;

/** Sets the shard heap flags once per process, before the first shard worker exists. */
export function configureShardHeaps(): void {
  if (configured) return;
  configured = true;
  for (const flag of shardHeapFlags(process.execArgv, process.env.NODE_OPTIONS)) setFlagsFromString(flag);
}
