// Which shard owns which partition, on the main thread. A partition gets a small integer
// handle when its actor is opened; rings carry handles, never names.
// Invariant: a handle is routable only after its shard confirmed the actor is open, so no
// ring message can reach a shard before the partition exists there.

export class ShardTable {
  private readonly shardByHandle: number[] = [];
  private readonly handlesByTopic = new Map<string, number[]>();
  private readonly load: number[];
  private nextHandle = 0;

  constructor(readonly shardCount: number) {
    this.load = new Array<number>(shardCount).fill(0);
  }

  /** Picks the least-loaded shard and reserves a handle; the handle routes only after `publish`. */
  reserve(): { handle: number; shard: number } {
    let shard = 0;
    for (let i = 1; i < this.shardCount; i++) if (this.load[i]! < this.load[shard]!) shard = i;
    // Handles are never reused: a stale ring message for a deleted partition must not reach
    // a newer partition that happened to get the same number.
    const handle = this.nextHandle++;
    this.load[shard]!++;
    this.shardByHandle[handle] = -1;
    return { handle, shard };
  }

  /** Returns a reserved handle whose actor failed to open. */
  unreserve(shard: number): void {
    this.load[shard]!--;
  }

  publish(topic: string, partition: number, handle: number, shard: number): void {
    let handles = this.handlesByTopic.get(topic);
    if (!handles) {
      handles = [];
      this.handlesByTopic.set(topic, handles);
    }
    handles[partition] = handle;
    this.shardByHandle[handle] = shard;
  }

  /** Handle of an open partition, or -1 when the partition is unknown or not open yet. */
  handleOf(topic: string, partition: number): number {
    const h = this.handlesByTopic.get(topic)?.[partition];
    return h === undefined ? -1 : h;
  }

  shardOf(handle: number): number {
    return this.shardByHandle[handle] ?? -1;
  }

  /** Number of partitions of `topic` that are open and routable. */
  openCount(topic: string): number {
    const handles = this.handlesByTopic.get(topic);
    if (!handles) return 0;
    let n = 0;
    for (const h of handles) if (h !== undefined) n++;
    return n;
  }

  /** Unroutes one open partition; returns its handle and shard for the caller to close, or null when it is not open. */
  removePartition(topic: string, partition: number): { handle: number; shard: number } | null {
    const handles = this.handlesByTopic.get(topic);
    const handle = handles?.[partition];
    if (handles === undefined || handle === undefined) return null;
    delete handles[partition];
    const shard = this.shardByHandle[handle]!;
    this.shardByHandle[handle] = -1;
    this.load[shard]!--;
    return { handle, shard };
  }

  /** Unroutes every partition of a topic; returns [handle, shard] pairs for the caller to close. */
  removeTopic(topic: string): Array<{ handle: number; shard: number; partition: number }> {
    const handles = this.handlesByTopic.get(topic) ?? [];
    this.handlesByTopic.delete(topic);
    const out: Array<{ handle: number; shard: number; partition: number }> = [];
    handles.forEach((handle, partition) => {
      const shard = this.shardByHandle[handle]!;
      this.shardByHandle[handle] = -1;
      this.load[shard]!--;
      out.push({ handle, shard, partition });
    });
    return out;
  }
}
