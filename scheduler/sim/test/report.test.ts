// The spread printed beside each ratio over seeds: Student's t interval of the mean.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { meanInterval } from '../report.js';

describe('meanInterval', () => {
  it('is the mean ± t(97.5%, n − 1) · s / √n', () => {
    // Five seeds 1..5: mean 3, s = √2.5, t(4) = 2.776, half-width 2.776 · √2.5 / √5 = 1.963.
    const [lo, hi] = meanInterval([1, 2, 3, 4, 5])!;
    assert.ok(Math.abs(lo - 1.037) < 1e-3 && Math.abs(hi - 4.963) < 1e-3, `${lo}–${hi}`);
    // Two seeds: t(1) = 12.706, so two close figures still give a wide interval.
    const [a, b] = meanInterval([1.0, 1.1])!;
    assert.ok(Math.abs(b - a - (2 * 12.706 * (Math.SQRT1_2 * 0.1)) / Math.SQRT2) < 1e-9);
  });

  it('has no interval for one seed, and a zero-width one for identical seeds', () => {
    assert.equal(meanInterval([1.2]), null);
    assert.deepEqual(meanInterval([1.2, 1.2, 1.2]), [1.2, 1.2]);
  });
});
