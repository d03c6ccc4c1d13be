// ParkingTicker: ticks at its period while its task says time still matters, stops waking the
// thread once it says not, and a poke brings the next run back within one period.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ParkingTicker, type TickerTimers } from '../../../src/common/parking_ticker.js';

/** Timers driven by hand: advance(ms) fires every interval due, in time order. */
class ManualTimers implements TickerTimers {
  now = 0;
  private next = 1;
  private readonly intervals = new Map<number, { ms: number; due: number; fn: () => void }>();

  get armed(): number {
    return this.intervals.size;
  }

  every(ms: number, fn: () => void): () => void {
    const id = this.next++;
    this.intervals.set(id, { ms, due: this.now + ms, fn });
    return () => this.intervals.delete(id);
  }

  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      let first: { ms: number; due: number; fn: () => void } | undefined;
      for (const t of this.intervals.values()) if (t.due <= end && (first === undefined || t.due < first.due)) first = t;
      if (first === undefined) break;
      this.now = first.due;
      first.due += first.ms;
      first.fn();
    }
    this.now = end;
  }
}

describe('ParkingTicker', () => {
  it('runs every period while the task needs it, parks after the first run that does not, and wakes on a poke', () => {
    const timers = new ManualTimers();
    const runs: number[] = [];
    let needed = 3;
    const ticker = new ParkingTicker(250, () => {
      runs.push(timers.now);
      return --needed > 0;
    }, timers);
    assert.equal(ticker.ticking, false, 'nothing runs before the first poke');
    ticker.poke();
    ticker.poke(); // a second poke while ticking arms nothing more
    assert.equal(timers.armed, 1);
    timers.advance(2000);
    assert.deepEqual(runs, [250, 500, 750], 'fixed-interval runs until the task says no more');
    assert.equal(ticker.ticking, false);
    assert.equal(timers.armed, 0, 'a parked ticker holds no timer: the idle thread is not woken');
    timers.advance(60_000);
    assert.equal(runs.length, 3);
    needed = 1;
    timers.advance(10); // at 62_010
    ticker.poke();
    timers.advance(1000);
    assert.deepEqual(runs.slice(3), [62_260], 'after a poke the next run is one period later');
  });

  it('close stops it for good', () => {
    const timers = new ManualTimers();
    let runs = 0;
    const ticker = new ParkingTicker(100, () => ++runs > 0, timers);
    ticker.poke();
    timers.advance(350);
    ticker.close();
    ticker.poke();
    timers.advance(1000);
    assert.equal(runs, 3);
    assert.equal(timers.armed, 0);
  });
});
