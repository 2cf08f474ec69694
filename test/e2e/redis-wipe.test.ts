/**
 * Redis loses everything (every key under the cluster's prefix deleted, as a restart without
 * persistence would) several times while two jobs take turns on one device, so a wipe finds one
 * holding the device and the other queued for it. Neither job may pay for it: each has a single
 * attempt, and both succeed. (A queued stage whose waiter record vanished used to crash its job.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';
import { deleteKeys } from '../helpers/redis.js';

let c: Cluster;
before(async () => {
  c = await startCluster({ maxJobsPerDevice: 2 });
});
after(() => c.close());

/**
 * Enough steps for both to be running through the wipes (which start once each has a checkpoint,
 * at step 5, and barely let them move on: from step 5 to 6 in one run), and to take turns for a
 * while after them. Were the wipes no hindrance, 3 of them (4.5 s) would still find both running.
 */
const STEPS = 40;

test(
  'Redis wiped repeatedly under two jobs sharing a device: both succeed on their one attempt',
  {
    timeout: 400_000,
  },
  async () => {
    await c.startWorker('shared', 1);
    const t = await c.h.createTenant('wiped');
    const ids: string[] = [];
    for (const name of ['wipe-a', 'wipe-b'])
      ids.push(
        (
          await t
            .as(c.h.http.post('/v1/jobs'))
            .send({ ...steadyJob(name, STEPS), maxAttempts: 1 })
            .expect(201)
        ).body.id,
      );
    for (const id of ids) await waitForStatus(c, t, id, ['running']);
    // Past their warm-ups (one long hold each), into the steps where they take turns.
    await waitFor('a checkpoint of each', async () => {
      const r = await c.sql.query(`SELECT count(DISTINCT job_id)::int AS n FROM checkpoints`);
      return r.rows[0].n === 2;
    });
    let wipes = 0;
    for (let i = 0; i < 6; i++) {
      const running = await c.sql.query(`SELECT 1 FROM jobs WHERE status = 'running'`);
      if (running.rows.length < 2) break;
      await deleteKeys(c.env.TIMESHARE_REDIS_PREFIX!);
      wipes++;
      await new Promise((r) => setTimeout(r, 1500));
    }
    assert.ok(wipes >= 3, `only ${wipes} wipes while both ran`);
    for (const id of ids) {
      const job = await waitForStatus(c, t, id, ['succeeded', 'failed', 'cancelled'], 300_000);
      assert.equal(job.status, 'succeeded', job.error ?? '');
      assert.equal(job.attempts, 1);
      const types = (await eventsOf(c, t, id)).map((e) => e.type);
      assert.equal(types.filter((x) => x === 'job.running').length, 1, types.join(' '));
    }
  },
);
