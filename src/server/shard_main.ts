// Worker-thread entry of one shard (what ShardHost's Worker runs; shard_entry.ts says where it
// is): builds the shard (actors/shard_thread.ts) on this thread from the data main handed in.
// It lives in the server layer so the shard's thread can also run what sits above the actors.
import { parentPort, workerData } from 'node:worker_threads';
import { runShard, type ShardWorkerData } from '../actors/shard_thread.js';

runShard(workerData as ShardWorkerData, parentPort!);
