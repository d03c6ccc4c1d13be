// The V8 heap setting shard workers start with (main thread, before it spawns the first one).
// A shard allocates a few KiB per request, nearly all of it dead by the next scavenge. V8, when
// no initial old-generation size is configured, keeps lowering its first old-generation limit
// while few objects survive scavenges, to just above what is live: a shard serving 100k msg/s
// then mark-compacted about five times a second (80 in 15 s; 7-14 ms of marking and pause each,
// where the end-to-end p99 of 13 ms came from), and one at 20k msg/s once every ~0.8 s. With the
// size configured the limit grows from it by V8's usual factors instead: 0 mark-compacts in 15 s
// and 7 in 40 s at the same 100k. The cost is up to that much more old space per shard before
// its first mark-compact.
// `--initial-old-space-size` is a process-wide V8 flag, read when an isolate is made: set here,
// it applies to every worker spawned afterwards; main's own heap, made before, keeps V8's default.
// A size the operator gave node (execArgv or NODE_OPTIONS) is left alone.
import { setFlagsFromString } from 'node:v8';

/** Old generation (MiB) a shard's heap may reach before its first mark-compact. */
export const SHARD_INITIAL_OLD_SPACE_MB = 64;

const FLAG = 'initial-old-space-size';

/** The V8 flag to set before spawning shard workers; null when node was given one already. */
export function shardHeapFlag(execArgv: readonly string[], nodeOptions: string | undefined): string | null {
  const given = (arg: string): boolean => arg.replace(/_/g, '-').startsWith(`--${FLAG}`);
  if (execArgv.some(given) || (nodeOptions ?? '').split(/\s+/).some(given)) return null;
  return `--${FLAG}=${SHARD_INITIAL_OLD_SPACE_MB}`;
}

let configured = false;

/** Sets the shard heap flag once per process, before the first shard worker exists. */
export function configureShardHeaps(): void {
  if (configured) return;
  configured = true;
  const flag = shardHeapFlag(process.execArgv, process.env.NODE_OPTIONS);
  if (flag !== null) setFlagsFromString(flag);
}
