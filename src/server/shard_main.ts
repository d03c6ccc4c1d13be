// Worker-thread entry of one shard (what ShardHost's Worker runs; shard_entry.ts says where it
// is): builds the shard (actors/shard_thread.ts) on this thread from the data main handed in,
// and serves the client connections main places on it (--connection-placement shards;
// net/placed_connections.ts, over the shard mesh's ports to its peers, which exist only then),
// which is why the entry lives in the server layer.
import { parentPort, workerData } from 'node:worker_threads';
import { runShard, type ShardWorkerData } from '../actors/shard_thread.js';
import { PlacedConnections } from '../net/placed_connections.js';

const data = workerData as ShardWorkerData;
const { log, shard, peers } = runShard(data, parentPort!);
// Main places connections only where it allocated the mesh.
if (peers !== null) new PlacedConnections(data.connections, log, shard, peers);
