// What each broker new partitions may go to holds already, as placement weighs it
// (replica_placement.ts): replicas and leaderships counted from the image, so the controller puts
// new partitions on the least-loaded brokers first (a broker just added before the others) and
// expansion without moves (`sluice cluster add-broker --no-move`) needs nothing more. Pure; main
// thread (the controller).
import type { PlacementBroker } from '../replica_placement.js';
import type { MetadataImage } from './image.js';

/**
 * The brokers new replicas may go to (registered, unfenced, not shutting down), by id, each with
 * the replicas it holds and the partitions it leads. Costs the live brokers' replicas, through
 * each table's per-broker index, which the controller's elections keep built anyway.
 */
export function placementBrokers(image: MetadataImage): PlacementBroker[] {
  const live: { id: number; rack: string | null; replicas: number; leaders: number }[] = [];
  for (const b of image.brokers.values()) if (!b.fenced && !b.inControlledShutdown) live.push({ id: b.id, rack: b.rack, replicas: 0, leaders: 0 });
  for (const t of image.topicsById.values()) {
    for (const b of live) {
      const hosted = t.table.hosting(b.id);
      b.replicas += hosted.length;
      for (const p of hosted) if (t.table.leader(p) === b.id) b.leaders++;
    }
  }
  return live.sort((a, b) => a.id - b.id);
}

/** `brokers` once they also hold `assignment` (its first replicas leading), for the next topic of one request. */
export function withAssignment(brokers: readonly PlacementBroker[], assignment: readonly (readonly number[])[]): PlacementBroker[] {
  const replicas = new Map<number, number>();
  const leaders = new Map<number, number>();
  for (const list of assignment) {
    for (const id of list) replicas.set(id, (replicas.get(id) ?? 0) + 1);
    if (list.length > 0) leaders.set(list[0]!, (leaders.get(list[0]!) ?? 0) + 1);
  }
  return brokers.map((b) => ({
    id: b.id, rack: b.rack, replicas: (b.replicas ?? 0) + (replicas.get(b.id) ?? 0), leaders: (b.leaders ?? 0) + (leaders.get(b.id) ?? 0),
  }));
}
