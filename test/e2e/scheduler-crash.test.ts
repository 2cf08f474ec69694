/**
 * A scheduler dies (SIGKILL) holding a queue entry it took but had not placed yet. A new scheduler
 * takes over and a node arrives: the held entry comes back to the queue once its lock lapses
 * (BullMQ's stalled-entry check), and every job runs exactly once to success, none lost, none
 * placed twice.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Queue } from 'bullmq';
import { JOBS_QUEUE, redisNames } from '../../common/queues.js';
import {
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';
import { startProcess, type Proc } from '../helpers/processes.js';

let c: Cluster;
const successors: Proc[] = [];

before(async () => {
  c = await startCluster();
});
after(async () => {
  for (const s of successors) await s.kill('SIGTERM');
  await c.close();
});

test(
  'a scheduler killed holding a queue entry loses no job; its successor places each once',
  { timeout: 180_000 },
  async (ctx) => {
    await c.scheduler.kill('SIGTERM'); // the cluster's own; this test runs its schedulers itself
    const t = await c.h.createTenant('orphans');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(
        (
          await t
            .as(c.h.http.post('/v1/jobs'))
            .send(steadyJob(`orphan-${i}`, 4))
            .expect(201)
        ).body.id,
      );

    const dying = startProcess('scheduler/main.ts', { ...c.env, TIMESHARE_FAULT: 'crash_in_placement' });
    assert.equal(await dying.exited, null, `killed by its signal:\n${dying.output()}`);
    const queue = new Queue(JOBS_QUEUE, {
      connection: { url: c.env.REDIS_URL },
      prefix: redisNames(c.env.TIMESHARE_REDIS_PREFIX!).bullPrefix,
    });
    try {
      const counts = await queue.getJobCounts('active', 'wait');
      ctx.diagnostic(`after the crash: ${JSON.stringify(counts)}`);
      assert.deepEqual(counts, { active: 1, wait: ids.length - 1 }, 'the dead scheduler holds one entry');

      successors.push(startProcess('scheduler/main.ts', c.env));
      await c.startWorker('late-node', 2);
      for (const id of ids) {
        const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
        assert.equal(job.status, 'succeeded', job.error ?? '');
        const placed = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.placed');
        assert.equal(placed.length, 1, `job ${id} placed once`);
      }
      await waitFor('the queue to empty', async () => {
        const left = await queue.getJobCounts('active', 'wait', 'delayed', 'failed');
        return Object.values(left).every((n) => n === 0);
      });
    } finally {
      await queue.close();
    }
  },
);
