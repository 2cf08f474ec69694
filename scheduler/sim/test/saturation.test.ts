// Jobs/hour compared only while every run has jobs waiting (saturation.ts), on hand-made timelines.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allWaiting, whileAllWait, type WorkTimeline } from '../saturation.js';

/** A timeline whose work grows at `rate` device-seconds per second from 0 to `end`, in 10 s steps. */
const steady = (rate: number, waits: [number, boolean][], end = 1000): WorkTimeline => {
  const progressAt: number[] = [];
  const progress: number[] = [];
  for (let t = 10; t <= end; t += 10) {
    progressAt.push(t);
    progress.push(rate * t);
  }
  return { progressAt, progress, waitingAt: waits.map((w) => w[0]), waiting: waits.map((w) => w[1]) };
};

describe('allWaiting', () => {
  it('is the intersection of the stretches in which each run has jobs waiting', () => {
    const a = steady(1, [
      [0, false],
      [100, true],
      [500, false],
      [700, true],
      [900, false],
    ]);
    const b = steady(1, [
      [0, false],
      [200, true],
      [800, false],
    ]);
    assert.deepEqual(allWaiting([a, b]), [
      [200, 500],
      [700, 800],
    ]);
  });

  it('is empty when the runs never wait together', () => {
    const a = steady(1, [
      [0, true],
      [100, false],
    ]);
    const b = steady(1, [
      [0, false],
      [100, true],
      [200, false],
    ]);
    assert.deepEqual(allWaiting([a, b]), []);
  });
});

describe('whileAllWait', () => {
  it("counts each run's work only inside the shared stretches, in jobs of the mean size per hour", () => {
    // Run a works twice as fast as b; work done outside [200, 500) does not count.
    const a = steady(2, [
      [0, false],
      [100, true],
      [600, false],
    ]);
    const b = steady(1, [
      [0, false],
      [200, true],
      [500, false],
    ]);
    const { jobsPerHour, hours } = whileAllWait([a, b], 36);
    assert.equal(hours, 300 / 3600);
    // a: 2 × 300 device-seconds = 600 = 16.7 jobs of 36 over 1/12 h.
    assert.ok(Math.abs(jobsPerHour[0]! - (600 / 36) * 12) < 1e-9);
    assert.ok(Math.abs(jobsPerHour[1]! - (300 / 36) * 12) < 1e-9);
  });

  it('takes steps lost to a take-back off the work of the stretch they fall in', () => {
    const lossy: WorkTimeline = {
      progressAt: [100, 200, 300],
      progress: [100, 50, 150],
      waitingAt: [0, 1000],
      waiting: [true, false],
    };
    const { jobsPerHour } = whileAllWait([lossy], 150);
    // 150 device-seconds net over 1000 s: one job over 1000/3600 h.
    assert.ok(Math.abs(jobsPerHour[0]! - 3.6) < 1e-9);
  });

  it('has no figure when the runs never all waited', () => {
    const a = steady(1, [[0, false]]);
    const { jobsPerHour, hours } = whileAllWait([a, steady(1, [[0, true]])], 10);
    assert.equal(hours, 0);
    assert.ok(jobsPerHour.every(Number.isNaN));
  });
});
