/**
 * `maxDevices` growth against real processes: a job alone on an idle node grows onto its devices;
 * a 1-device job submitted after it gets them back (a `shrink` notice, not a wait until the grown
 * job ends), and the grown job resumes at its minimum from the checkpoint it wrote. The same when
 * what holds the second job back is its tenant's device quota, which the growth filled. Before,
 * the second job waited (`capacity`, then `quota` with no estimate) for the grown job to finish.
 * And a tenant at its device quota: its urgent job takes the quota from its low-priority one (a
 * `priority` notice) rather than waiting on `quota` for it to end.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  QUICK_PREEMPTION_ENV,
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
    env: QUICK_PREEMPTION_ENV,
  });
  await c.startWorker('growth-node', 3);
});
after(() => c.close());

const devicesOf = async (id: string): Promise<number[]> =>
  (await c.sql.query(`SELECT placement->'devices' AS d FROM jobs WHERE id = $1`, [id])).rows[0]?.d ?? [];

type Tenant = Awaited<ReturnType<Cluster['h']['createTenant']>>;

/**
 * `victim` gets a notice for `forJob` with `reason`; `forJob` runs to success; `victim` runs again
 * from the checkpoint it wrote, and is cancelled.
 */
async function noticedThenResumed(t: Tenant, victim: string, forJob: string, reason: string) {
  const notice = await waitFor(
    `a notice to ${victim}`,
    async () => (await eventsOf(c, t, victim)).find((e) => e.type === 'job.preempting'),
    60_000,
  );
  assert.equal(notice.data.reason, reason);
  assert.equal(notice.data.forJobId, forJob);
  const done = await waitForStatus(c, t, forJob, ['succeeded', 'failed']);
  assert.equal(done.status, 'succeeded', done.error ?? '');
  const runs = await waitFor(`${victim} running again`, async () => {
    const r = (await eventsOf(c, t, victim)).filter((e) => e.type === 'job.running');
    return r.length >= 2 ? r : null;
  });
  assert.ok(Number(runs[1]!.data.resumedFromStep) > 0, 'resumed from its checkpoint, not from scratch');
  await t.as(c.h.http.post(`/v1/jobs/${victim}/cancel`)).expect(200);
}

/** A job grows onto `grownTo`; a 1-device job of its tenant then gets its growth back. */
async function growThenGiveBack(quota: Record<string, number> | undefined, grownTo: number[]) {
  const t = await c.h.createTenant(undefined, quota);
  const submit = async (spec: object) =>
    (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;

  const grown = await submit({ ...steadyJob('grown', 2000), resources: { devices: 1, maxDevices: 3 } });
  await waitForStatus(c, t, grown, ['running']);
  assert.deepEqual(await devicesOf(grown), grownTo, 'grew onto idle devices');
  await waitFor('a checkpoint', async () =>
    (await eventsOf(c, t, grown)).some((e) => e.type === 'job.checkpoint'),
  );

  const small = await submit(steadyJob('small', 10));
  await noticedThenResumed(t, grown, small, 'shrink');
  await waitFor('devices free', async () => {
    const r = await c.sql.query(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('placed', 'running')`);
    return r.rows[0].n === 0;
  });
}

test('a job grown into idle devices gives them back to a job that waits for them', { timeout: 240_000 }, () =>
  growThenGiveBack(undefined, [0, 1, 2]),
);

test(
  'a job grown up to its tenant’s device quota gives its growth back to the tenant’s next job',
  { timeout: 240_000 },
  () => growThenGiveBack({ maxConcurrentDevices: 2 }, [0, 1]),
);

test(
  'an urgent job its tenant’s device quota holds back preempts the tenant’s low-priority job',
  { timeout: 240_000 },
  async () => {
    const t = await c.h.createTenant(undefined, { maxConcurrentDevices: 1 });
    const submit = async (spec: object) =>
      (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
    const low = await submit({ ...steadyJob('low', 2000), priority: 'low' });
    await waitForStatus(c, t, low, ['running']);
    await waitFor('a checkpoint', async () =>
      (await eventsOf(c, t, low)).some((e) => e.type === 'job.checkpoint'),
    );
    const urgent = await submit({ ...steadyJob('urgent', 10), priority: 'urgent' });
    await noticedThenResumed(t, low, urgent, 'priority');
  },
);
