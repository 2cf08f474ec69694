/** The reactive balancer's score and decision (worker-node/balancer.ts), table-driven. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decideBalance,
  defaultBalancerConfig,
  imbalanceScore,
  movedStages,
  predictAfterMove,
  type BalanceWindow,
  type BalancerState,
} from '../balancer.js';

/** A window of 3 steps of `step` seconds; per step, each side's busy and wait seconds. */
function windowOf(o: {
  g: number;
  t: number;
  step: number;
  genBusy: number;
  trainBusy: number;
  genWait?: number;
  trainWait?: number;
}): BalanceWindow {
  const steps = 3;
  return {
    steps,
    wallSeconds: o.step * steps,
    generate: { devices: o.g, busySeconds: o.genBusy * steps, waitSeconds: (o.genWait ?? 0) * steps },
    train: { devices: o.t, busySeconds: o.trainBusy * steps, waitSeconds: (o.trainWait ?? 0) * steps },
  };
}

const fresh: BalancerState = {
  stepsSinceMove: 10,
  lastMove: null,
  measuredMoveSeconds: null,
  remainingSteps: 100,
};

const balanced = windowOf({
  g: 2,
  t: 2,
  step: 1,
  genBusy: 0.95,
  trainBusy: 0.9,
  genWait: 0.03,
  trainWait: 0.05,
});
// Generation the bottleneck on 1 of 4 devices: training starves waiting for micro-batches.
const genBound = windowOf({ g: 1, t: 3, step: 1, genBusy: 0.98, trainBusy: 0.3, trainWait: 0.65 });
// Training the bottleneck on 1 of 4 devices: the generator is blocked on a full pipe / the lag gate.
const trainBound = windowOf({ g: 3, t: 1, step: 1, genBusy: 0.2, trainBusy: 0.98, genWait: 0.75 });

const cases: {
  name: string;
  w: BalanceWindow;
  s?: Partial<BalancerState>;
  move: 'to_generate' | 'to_train' | null;
  reason: string;
}[] = [
  { name: 'balanced: no move', w: balanced, move: null, reason: 'balanced' },
  { name: 'generation-bound: a device to generation', w: genBound, move: 'to_generate', reason: 'move' },
  { name: 'train-bound: a device to training', w: trainBound, move: 'to_train', reason: 'move' },
  {
    name: 'too few steps measured: no move yet',
    w: { ...trainBound, steps: 2 },
    move: null,
    reason: 'measuring',
  },
  {
    name: 'inside the cooldown after a move: no move',
    w: trainBound,
    s: { stepsSinceMove: 2, lastMove: 'to_train' },
    move: null,
    reason: 'cooldown',
  },
  {
    name: 'a reversal needs the higher threshold (hysteresis)',
    w: windowOf({ g: 2, t: 2, step: 1, genBusy: 0.95, trainBusy: 0.3, trainWait: 0.1 }),
    s: { stepsSinceMove: 10, lastMove: 'to_train' },
    move: null,
    reason: 'balanced',
  },
  {
    name: 'the same imbalance with no move before: moves',
    w: windowOf({ g: 2, t: 2, step: 1, genBusy: 0.95, trainBusy: 0.3, trainWait: 0.1 }),
    move: 'to_generate',
    reason: 'move',
  },
  {
    name: 'never below one device per side',
    w: windowOf({ g: 1, t: 1, step: 1, genBusy: 0.2, trainBusy: 0.98, genWait: 0.75 }),
    move: null,
    reason: 'at_minimum',
  },
  {
    name: 'a move that would only shift the bottleneck is not taken',
    // Training on 2 is slower than generation on 2, but on 3 generation would be slower still.
    w: windowOf({ g: 2, t: 2, step: 1, genBusy: 0.7, trainBusy: 0.98, genWait: 0.25 }),
    move: null,
    reason: 'not_faster',
  },
  {
    name: 'a move that does not pay back over the remaining steps is not taken',
    w: trainBound,
    s: { remainingSteps: 2, measuredMoveSeconds: 5 },
    move: null,
    reason: 'does_not_pay',
  },
];

for (const c of cases)
  test(c.name, () => {
    const d = decideBalance(c.w, { ...fresh, ...c.s }, defaultBalancerConfig);
    assert.equal(d.move, c.move, JSON.stringify(d));
    assert.equal(d.reason, c.reason, JSON.stringify(d));
  });

test('the score is signed by the over-loaded side and bounded', () => {
  assert.ok(Math.abs(imbalanceScore(balanced)) < 0.1);
  assert.ok(imbalanceScore(genBound) > 0.5);
  assert.ok(imbalanceScore(trainBound) < -0.5);
  assert.equal(imbalanceScore({ ...balanced, wallSeconds: 0 }), 0);
  const extreme = windowOf({ g: 1, t: 1, step: 1, genBusy: 5, trainBusy: 0, trainWait: 5 });
  assert.equal(imbalanceScore(extreme), 1);
});

test('the prediction scales each side by its devices and the step by the bottleneck', () => {
  // 3/1, training 0.98 s a step: on 2 it takes 0.49, generation 0.2 · 3/2 = 0.3 → step halves.
  assert.ok(Math.abs(predictAfterMove(trainBound, 'to_train') - 0.5) < 1e-9);
});

test('no flapping: after a move the measured window that follows does not move the device back', () => {
  // 3/1 train-bound moved to 2/2; measured after: training still the (smaller) bottleneck.
  const afterMove = windowOf({ g: 2, t: 2, step: 0.5, genBusy: 0.15, trainBusy: 0.49, genWait: 0.3 });
  let s: BalancerState = {
    stepsSinceMove: 0,
    lastMove: 'to_train',
    measuredMoveSeconds: 0.02,
    remainingSteps: 50,
  };
  const moves: string[] = [];
  for (let step = 0; step < 12; step++) {
    s = { ...s, stepsSinceMove: s.stepsSinceMove + 1 };
    const d = decideBalance(afterMove, s, defaultBalancerConfig);
    if (d.move) moves.push(d.move);
  }
  assert.ok(!moves.includes('to_generate'), `never back: ${moves}`);
  // Alternating noisy windows around balance never move at all.
  const noisy = [0.2, -0.2, 0.15, -0.22].map((x) =>
    windowOf({ g: 2, t: 2, step: 1, genBusy: 0.8 + x / 2, trainBusy: 0.8 - x / 2 }),
  );
  for (const w of noisy) assert.equal(decideBalance(w, fresh, defaultBalancerConfig).move, null);
});

test('a move takes the device at the boundary between the sets', () => {
  const s = { generate: [4, 5, 6], train: [7] };
  assert.deepEqual(movedStages(s, 'to_train'), { generate: [4, 5], train: [6, 7] });
  assert.deepEqual(movedStages({ generate: [4, 5], train: [6, 7] }, 'to_generate'), {
    generate: [4, 5, 6],
    train: [7],
  });
});
