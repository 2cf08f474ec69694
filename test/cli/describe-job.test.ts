// `jobs get` and `jobs pause|resume` in words. `jobs get` showed the runs that count toward
// maxAttempts against it: a job preempted four times and still running read "attempts 5/3", as if
// past its limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Job } from '../../sdk/src/index.js';
import { describeJob, pauseOutcome } from '../../cli/format.js';

const job = (attempts: number, countedAttempts: number) =>
  ({
    id: 'j',
    name: 'n',
    status: 'running',
    pool: 'default',
    priority: 'normal',
    attempts,
    countedAttempts,
    maxAttempts: 3,
    queuePosition: null,
    estimatedStartAt: null,
    waitReason: null,
    progress: { step: null, steps: 10, updatedAt: null, estimatedFinishAt: null },
    startedAt: null,
    finishedAt: null,
    error: null,
  }) as unknown as Job;

test('attempts count what maxAttempts counts, with every run beside them when they differ', () => {
  assert.ok(describeJob(job(5, 1)).some((l) => l.endsWith('attempts 1/3 (5 runs)')));
  assert.ok(describeJob(job(2, 2)).some((l) => l.endsWith('attempts 2/3')));
});

// A paused job showed no sign of it in `jobs get`, and one still running under its pause notice
// read as plainly running.
const paused = (status: string, pausedAt: string | null) =>
  ({ ...job(1, 1), status, pausedAt }) as unknown as Job;

test('a paused job says since when, and one that holds devices that it leaves them', () => {
  const at = '2030-01-01T00:00:00.000Z';
  assert.ok(describeJob(paused('queued', at)).includes(`  paused since ${at}`));
  for (const status of ['placed', 'running'])
    assert.ok(
      describeJob(paused(status, at)).includes(
        `  paused since ${at} (it checkpoints and leaves its devices, then waits until resumed)`,
      ),
      status,
    );
  assert.ok(!describeJob(paused('running', null)).some((l) => /paused/.test(l)));
});

test('pause and resume say what they did, from pausedAt before and after', () => {
  const at = '2030-01-01T00:00:00.000Z';
  const q = (pausedAt: string | null) => paused('queued', pausedAt);
  assert.equal(pauseOutcome('pause', q(null), q(at)), 'job j paused (queued)');
  assert.equal(
    pauseOutcome('pause', paused('running', null), paused('running', at)),
    'job j paused (running): it checkpoints and leaves its devices',
  );
  assert.equal(
    pauseOutcome('pause', q(at), q(at)),
    `job j was already paused since ${at} (queued): nothing to do`,
  );
  assert.equal(pauseOutcome('resume', q(at), q(null)), 'job j resumed (queued)');
  assert.equal(pauseOutcome('resume', q(null), q(null)), 'job j was not paused (queued): nothing to do');
});

// A job that met its target early read "succeeded, step 10 of 300" with nothing saying why.
test('a succeeded job says why it ended where it did', () => {
  const done = (finishReason: string | null) =>
    ({
      ...job(1, 1),
      status: 'succeeded',
      finishedAt: '2026-11-28T12:00:00.000Z',
      finishReason,
    }) as unknown as Job;
  assert.ok(
    describeJob(done('target_accuracy')).includes(
      '  finished: 2026-11-28T12:00:00.000Z (its target accuracy reached)',
    ),
  );
  assert.ok(describeJob(done('steps_completed')).some((l) => l.endsWith('(all its steps done)')));
  assert.ok(describeJob(done(null)).includes('  finished: 2026-11-28T12:00:00.000Z'));
});
