// In-flight window rule for the parallel consumer: whether a partition may start one more
// fetched message now so that its commit metadata (offset_codec.ts) keeps fitting its budget
// whatever order the in-flight messages then complete in.
// Runs on the consumer's thread; pure functions.
// Why a worst-case bound and not today's encoding: any started message may complete next, so a
// window sized by the current encoding could stop fitting later and the commit would have to
// drop its metadata or stall. Two bounds cover the worst case; a start is allowed when either
// holds for the state it creates:
//  - bitmap: the encoder never writes more than the bitmap of the span from the watermark to
//    the last started (or resumed) offset, which depends only on base and span;
//  - runs: completing the lowest in-flight message only shortens the run list, and completing
//    any other one splits at most one run into three (two more varints ≤ the span's), so the
//    run-length encoding stays under today's size + 2 varints per other in-flight message.
// The bitmap bound is O(1) and is what a normal window hits (~24k offsets at Kafka's default
// 4096); the runs bound (O(window) to evaluate) is what lets a resumed consumer whose metadata
// covers a long span in few runs keep working. Slack: the base only grows as the watermark
// moves, which can lengthen its varint by a byte, and the run count's varint may grow too.
// Invariants: with nothing in flight the next message may always start (completing it never
// grows the encoding), so the rule throttles — the window shrinks while a slow message holds
// the watermark — but never deadlocks; resumed-complete offsets are always allowed (skipped).

import { bitmapEncodedLength, encodedLengthOfPayload, runsPayloadLength, varintLength } from './offset_codec.js';
import type { WatermarkTracker } from './watermark.js';

/** One more payload byte costs at most two base64url characters. */
const BITMAP_SLACK_CHARS = 2;
/** Base varint growth plus run-count varint growth, in payload bytes. */
const RUNS_SLACK_BYTES = 3;

/**
 * Largest span of offsets above `base` whose bitmap encoding fits `budgetChars`. A span of 1
 * (only the watermark offset itself in flight) encodes as '' and always fits.
 */
export function maxWindowSpan(base: number, budgetChars: number): number {
  // The answer depends on the base only through its varint length: remember the last one, as
  // a consumer asks the same question for every fetched message.
  const baseBytes = varintLength(base);
  if (baseBytes === cachedBaseBytes && budgetChars === cachedBudget) return cachedSpan;
  cachedSpan = searchSpan(base, budgetChars);
  cachedBaseBytes = baseBytes;
  cachedBudget = budgetChars;
  return cachedSpan;
}

let cachedBaseBytes = -1;
let cachedBudget = -1;
let cachedSpan = 1;

function searchSpan(base: number, budgetChars: number): number {
  if (bitmapEncodedLength(base, 2) > budgetChars) return 1;
  let low = 2; // fits
  let high = Math.max(2, budgetChars * 8); // a bitmap needs at least span/8 bytes, so this does not fit
  while (high - low > 1) {
    const mid = low + Math.floor((high - low) / 2);
    if (bitmapEncodedLength(base, mid) <= budgetChars) low = mid;
    else high = mid;
  }
  return low;
}

/** Whether the tracker may start the fetched message at `offset` now (see the file header). */
export function mayStart(tracker: WatermarkTracker, offset: number, budgetChars: number): boolean {
  if (tracker.alreadyComplete(offset)) return true;
  if (tracker.windowSize >= tracker.maxWindow) return false;
  if (tracker.inFlight === 0) return true;
  const base = tracker.committable();
  const span = Math.max(offset + 1, tracker.resumedEnd) - base;
  if (span <= maxWindowSpan(base, budgetChars - BITMAP_SLACK_CHARS)) return true;
  const worstRuns =
    runsPayloadLength(base, tracker.completionRuns()) + 2 * varintLength(span) * tracker.inFlight + RUNS_SLACK_BYTES;
  return encodedLengthOfPayload(worstRuns) <= budgetChars;
}
