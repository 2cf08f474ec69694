/**
 * The pool's pace (pace.ts): the estimates price a step the prior still stands for at how the
 * pool's measured jobs run against their prior. A QA run on a loaded machine saw every job behind
 * freshly placed ones told it would start 80–115 s early: the fresh jobs were priced at the prior's
 * 0.040 s a step while every measured job of the pool ran 0.148 s.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kueueLikePolicy } from '../policy.js';
import { poolPace } from '../pace.js';
import { schedule } from '../schedule.js';
import { T0, node, plan, queued, running, snapshot, tenant } from './builders.js';

/** A measured job running 3× its prior on device 0, a fresh one at its prior on device 1. */
const measured = running('measured', 'a', 'n1', [0], {
  plan: plan({ stepSeconds: 30, priorStepSeconds: 10, confidence: 1 }),
  steps: 10_000,
  stepsDone: 0,
});
const fresh = running('fresh', 'a', 'n1', [1], {
  plan: plan({ stepSeconds: 10, priorStepSeconds: 10, confidence: 0 }),
  steps: 100,
  stepsDone: 0,
});

describe('the pool pace', () => {
  it('is the median of measured ÷ prior over measured jobs alone on their devices, bounded', () => {
    const alone = () => true;
    assert.equal(poolPace([measured, fresh], alone), 3);
    assert.equal(poolPace([fresh], alone), 1, 'nothing measured: the prior as it is');
    assert.equal(
      poolPace([measured], () => false),
      1,
      'a shared job waits its partners’ turns',
    );
    const slow = { ...measured, plan: plan({ stepSeconds: 100, priorStepSeconds: 1, confidence: 1 }) };
    assert.equal(poolPace([slow], alone), 4);
  });

  it("dates a queued job behind an unmeasured one at the pool's pace", () => {
    const s = snapshot({
      nodes: [node('n1', 2)],
      tenants: [tenant('a')],
      running: [measured, fresh],
      queued: [queued('next', 'a', { profile: null })],
    });
    const d = schedule(s, kueueLikePolicy, T0);
    const next = d.queue.find((q) => q.jobId === 'next')!;
    // fresh's 100 steps at 3 × 10 s, not at 10 s.
    assert.equal(next.estimatedStartAt, T0 + 100 * 30 * 1000);
  });
});
