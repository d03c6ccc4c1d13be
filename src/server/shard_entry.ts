// Where a shard worker's entry module is (main thread): shard_main.js beside this module, or
// inside the single executable its embedded bundle (scripts/build_binary.mjs), evaluated from
// memory since the executable has no files beside it. ShardHost (actors) is handed this.
import type { ShardWorkerEntry } from '../actors/shard_host.js';
import { embeddedText } from '../native/embedded.js';

export function shardWorkerEntry(): ShardWorkerEntry {
  const text = embeddedText('shard_main.js');
  return text !== null ? { text } : { url: new URL('./shard_main.js', import.meta.url) };
}
