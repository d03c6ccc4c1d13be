// A shard's lanes (shard worker thread): a lane is one origin of the requests a shard serves and
// the place their answers go back to. Lane 0 is main's ring pair (the inbound ring the drain loop
// reads, the Outbox in front of the outbound ring); `Shard.attachRingLane` adds another ring pair
// (a peer shard's, drained and answered the same way); `Shard.openLane` adds an origin on the
// shard's own thread. Request ids are the origin's, so two lanes may use the same one: whatever
// outlives the request's own call (a parked fetch, a group call waiting for a rebalance) is known
// by its lane-qualified key, a plain number, so carrying the lane costs no allocation.
import type { Outgoing } from './outbox.js';

/** Main's ring pair. */
export const MAIN_LANE = 0;

/** Keys are lane * 2^32 + reqId: exact integers while lane < 2^21. */
export const MAX_LANES = 1 << 21;
const REQ_IDS = 0x1_0000_0000;

/** Where one lane's answers go, in the order the shard sends them (the Outbox for lane 0). */
export interface LaneSink {
  send(msg: Outgoing): void;
}

/** Request `reqId` of `lane` as one number; lane 0's keys are its request ids. */
export function laneKey(lane: number, reqId: number): number {
  return lane * REQ_IDS + reqId;
}

export function laneOfKey(key: number): number {
  return Math.floor(key / REQ_IDS);
}

export function reqIdOfKey(key: number): number {
  return key % REQ_IDS;
}
