import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateFinish, PACE_MIN_STEPS } from '../jobs/serialize.js';

const t = (s: number) => new Date(Date.UTC(2026, 10, 28, 0, 0, s));

test("a running job's finish is its last step at the pace of its run so far, start left out", () => {
  // First reported step 1 at 0:00:10 (the run started earlier: its warm-up is not counted), step 5 at 0:00:30.
  const p = { step: 5, at: t(30), paceStep: 1, paceAt: t(10) };
  assert.deepEqual(estimateFinish(p, 20), t(30 + 15 * 5));
  // A run resumed from step 40 of 100: its pace counts from its own first step.
  assert.deepEqual(estimateFinish({ step: 50, at: t(50), paceStep: 41, paceAt: t(5) }, 100), t(50 + 50 * 5));
});

test('no estimate before the run has a pace, or once it reached its steps', () => {
  assert.equal(estimateFinish({ step: null, at: null, paceStep: null, paceAt: null }, 10), null);
  assert.equal(estimateFinish({ step: 0, at: t(0), paceStep: null, paceAt: null }, 10), null);
  const short = { step: PACE_MIN_STEPS, at: t(9), paceStep: 1, paceAt: t(1) };
  assert.equal(estimateFinish(short, 10), null, `fewer than ${PACE_MIN_STEPS} steps of pace`);
  assert.equal(estimateFinish({ step: 10, at: t(30), paceStep: 1, paceAt: t(0) }, 10), null);
});
