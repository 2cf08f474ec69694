// `jobs get` shows the runs that count toward maxAttempts against it: a job preempted four times
// and still running read "attempts 5/3", as if past its limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Job } from '../../sdk/src/index.js';
import { describeJob } from '../../cli/format.js';

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
