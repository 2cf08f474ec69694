/**
 * `maxDevices` growth against real processes: a job alone on an idle 2-device node grows onto both
 * devices; a 1-device job submitted after it gets them back (a `shrink` notice, not a wait until
 * the grown job ends), and the grown job resumes at its minimum from the checkpoint it wrote.
 * Before, the second job waited with reason `capacity` for the grown job to finish.
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

let c: Cluster;

before(async () => {
  c = await startCluster({
    maxJobsPerDevice: 1,
    env: { TIMESHARE_MIN_RUN_SECONDS: '1', TIMESHARE_PREEMPT_GRACE_SECONDS: '15' },
  });
  await c.startWorker('growth-node', 2);
});
after(() => c.close());

const devicesOf = async (id: string): Promise<number[]> =>
  (await c.sql.query(`SELECT placement->'devices' AS d FROM jobs WHERE id = $1`, [id])).rows[0]?.d ?? [];

test(
  'a job grown into idle devices gives them back to a job that waits for them',
  { timeout: 240_000 },
  async () => {
    const t = await c.h.createTenant('grower');
    const submit = async (spec: object) =>
      (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;

    const grown = await submit({ ...steadyJob('grown', 2000), resources: { devices: 1, maxDevices: 2 } });
    await waitForStatus(c, t, grown, ['running']);
    assert.deepEqual(await devicesOf(grown), [0, 1], 'grew onto the idle device');
    await waitFor('a checkpoint', async () =>
      (await eventsOf(c, t, grown)).some((e) => e.type === 'job.checkpoint'),
    );

    const small = await submit(steadyJob('small', 10));
    const notice = await waitFor(
      'a notice to the grown job',
      async () => (await eventsOf(c, t, grown)).find((e) => e.type === 'job.preempting'),
      60_000,
    );
    assert.equal(notice.data.reason, 'shrink');
    assert.equal(notice.data.forJobId, small);
    const done = await waitForStatus(c, t, small, ['succeeded', 'failed']);
    assert.equal(done.status, 'succeeded', done.error ?? '');

    const runs = await waitFor('the grown job running again', async () => {
      const r = (await eventsOf(c, t, grown)).filter((e) => e.type === 'job.running');
      return r.length >= 2 ? r : null;
    });
    assert.ok(Number(runs[1]!.data.resumedFromStep) > 0, 'resumed from its checkpoint, not from scratch');
    await t.as(c.h.http.post(`/v1/jobs/${grown}/cancel`)).expect(200);
  },
);
