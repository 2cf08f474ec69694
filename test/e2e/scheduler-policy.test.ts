/**
 * The scheduler's policy against real processes (one device per job, no time-sharing here, so every
 * decision is visible): a higher-priority job preempts a lower one of its tenant, which checkpoints,
 * requeues and resumes from that checkpoint; a tenant returning to the pool reclaims what another
 * borrowed within a round plus the grace period; queued jobs carry positions, estimates and reasons
 * that move as the queue drains; and 30,000 unplaceable jobs in one pool do not delay another pool.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  QUICK_PREEMPTION_ENV,
  eventsOf,
  jobOf,
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
  await c.startWorker('policy-node', 2);
});
after(() => c.close());

type Tenant = Awaited<ReturnType<Cluster['h']['createTenant']>>;
const submit = async (t: Tenant, spec: object) =>
  (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
/** Cancels every job given (of one tenant or several), then waits until no job holds a device. */
const cancelAll = async (...of: [Tenant, string[]][]) => {
  // Jobs that already finished answer 409; either way they hold no device afterwards.
  for (const [t, ids] of of)
    for (const id of ids)
      await t.as(c.h.http.post(`/v1/jobs/${id}/cancel`)).expect((r) => [200, 409].includes(r.status));
  await waitFor('devices free', async () => {
    const r = await c.sql.query(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('placed', 'running')`);
    return r.rows[0].n === 0;
  });
};

test(
  'priority: a lower-priority job is preempted with a checkpoint and resumes from it',
  { timeout: 240_000 },
  async () => {
    const t = await c.h.createTenant('prio');
    // Long enough that neither can end within the grace period: a measured job predicted to end
    // within it is not preempted (min-run.ts `endsWithinGrace`), and 60 steps on a fast machine
    // left the urgent job waiting for them to end with no notice at all (a CI run timed out).
    const low = [
      await submit(t, { ...steadyJob('low-0', 2000), priority: 'low' }),
      await submit(t, { ...steadyJob('low-1', 2000), priority: 'low' }),
    ];
    for (const id of low) await waitForStatus(c, t, id, ['running']);
    await waitFor('a checkpoint', async () =>
      (await eventsOf(c, t, low[0]!)).some((e) => e.type === 'job.checkpoint'),
    );
    const urgent = await submit(t, { ...steadyJob('urgent', 10), priority: 'urgent' });
    const notice = await waitFor('a preemption notice', async () => {
      for (const id of low) {
        const e = (await eventsOf(c, t, id)).find((x) => x.type === 'job.preempting');
        if (e) return { id, e };
      }
      return null;
    });
    assert.equal(notice.e.data.reason, 'priority');
    assert.equal(notice.e.data.forJobId, urgent);
    const victim = notice.id;
    await waitFor('the victim back in the queue', async () =>
      (await eventsOf(c, t, victim)).some((e) => e.type === 'job.preempted'),
    );
    assert.equal((await waitForStatus(c, t, urgent, ['succeeded', 'failed'])).status, 'succeeded');
    // Once the urgent job has its device back, the victim runs again from its checkpoint.
    const runs = await waitFor('the victim running again', async () => {
      const r = (await eventsOf(c, t, victim)).filter((e) => e.type === 'job.running');
      return r.length === 2 && r;
    });
    assert.ok(Number(runs[1]!.data.resumedFromStep) > 0, 'resumed from its checkpoint, not from scratch');
    await cancelAll([t, low]);
  },
);

test(
  'reclaim: a returning tenant gets its share back within a round plus the grace period',
  { timeout: 240_000 },
  async () => {
    const borrower = await c.h.createTenant('borrower');
    const owner = await c.h.createTenant('owner');
    const borrowed = [
      await submit(borrower, steadyJob('b-0', 200)),
      await submit(borrower, steadyJob('b-1', 200)),
    ];
    for (const id of borrowed) await waitForStatus(c, borrower, id, ['running']);
    await new Promise((r) => setTimeout(r, 1500)); // past the minimum run time
    const queuedAt = Date.now();
    const mine = await submit(owner, steadyJob('o-0', 200));
    await waitForStatus(c, owner, mine, ['placed', 'running']);
    const tookMs = Date.now() - queuedAt;
    assert.ok(tookMs < 1000 + 15_000 + 3000, `placed ${tookMs} ms after submission (round + grace + slack)`);
    const reclaimed = [];
    for (const id of borrowed) {
      const e = (await eventsOf(c, borrower, id)).find((x) => x.type === 'job.preempting');
      if (e) reclaimed.push(e.data.reason);
    }
    assert.deepEqual(reclaimed, ['reclaim'], 'exactly one borrowed device reclaimed');
    // The reclaimed job waits and says why; its tenant's share is back at its entitlement.
    const victim = (await Promise.all(borrowed.map((id) => jobOf(c, borrower, id)))).find(
      (j) => j.status === 'queued',
    );
    assert.ok(victim, 'the reclaimed job is queued');
    const view = await waitFor('a queue view', async () => {
      const j = (await borrower.as(c.h.http.get(`/v1/jobs/${victim.id}`)).expect(200)).body;
      return j.queuePosition ? j : null;
    });
    assert.ok(['preempted', 'fair_share'].includes(view.waitReason), view.waitReason);
    const usage = (await owner.as(c.h.http.get('/v1/usage')).expect(200)).body;
    assert.equal(usage.shares.default.entitlement, 0.5);
    // And it does not take its device back: no preemption of the owner.
    await new Promise((r) => setTimeout(r, 3000));
    assert.ok(
      !(await eventsOf(c, owner, mine)).some((e) => e.type === 'job.preempting'),
      'no back and forth',
    );
    // Both at once: waiting for the borrower's alone waited out the owner's job (16 s).
    await cancelAll([borrower, borrowed], [owner, [mine]]);
  },
);

test('positions and estimates move as the queue drains', { timeout: 240_000 }, async () => {
  const t = await c.h.createTenant('drain');
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push(await submit(t, steadyJob(`d-${i}`, 15)));
  const last = ids.at(-1)!;
  const first = await waitFor('a queue view', async () => {
    const j = (await t.as(c.h.http.get(`/v1/jobs/${last}`)).expect(200)).body;
    return j.queuePosition ? j : null;
  });
  assert.equal(first.waitReason, 'capacity');
  assert.ok(first.estimatedStartAt, 'an estimate');
  const later = await waitFor(
    'the position to move up',
    async () => {
      const j = (await t.as(c.h.http.get(`/v1/jobs/${last}`)).expect(200)).body;
      return j.status !== 'queued' || j.queuePosition < first.queuePosition ? j : null;
    },
    120_000,
  );
  assert.ok(later.status !== 'queued' || later.queuePosition < first.queuePosition);
  for (const id of ids)
    assert.equal((await waitForStatus(c, t, id, ['succeeded', 'failed'])).status, 'succeeded');
});

test(
  '30,000 unplaceable jobs in one pool do not delay a job in an idle pool',
  { timeout: 240_000 },
  async () => {
    const t = await c.h.createTenant('crowd');
    await c.sql.query(`UPDATE quotas SET max_active_jobs = 100000 WHERE tenant_id = $1`, [t.id]);
    await c.sql.query(
      `INSERT INTO jobs (tenant_id, name, pool, spec, wait_reason)
     SELECT $1, 'crowd-' || g, 'nowhere', '{"name":"crowd","pool":"nowhere","workflow":{"task":{"name":"addition"}}}', 'capacity'
       FROM generate_series(1, 30000) g`,
      [t.id],
    );
    const submittedAt = Date.now();
    const id = await submit(t, steadyJob('idle-pool', 5));
    await waitForStatus(c, t, id, ['placed', 'running', 'succeeded']);
    const ms = Date.now() - submittedAt;
    assert.ok(ms < 5000, `placed ${ms} ms after submission`);
    // The crowd stays in its own pool's queue, each job with a position.
    await waitFor(
      'the crowd in the queue view',
      async () =>
        (await t.as(c.h.http.get('/v1/jobs?status=queued&limit=1')).expect(200)).body.data[0]?.queuePosition >
        0,
      20_000,
    );
    // Admins page through the pool's queue in order (Kueue's visibility API, with estimates).
    const page = (await c.h.admin(c.h.http.get('/v1/pools/nowhere/queue?offset=100&limit=3')).expect(200))
      .body;
    assert.ok(page.total >= 30_000, `total ${page.total}`);
    assert.deepEqual(
      page.data.map((e: { queuePosition: number }) => e.queuePosition),
      [101, 102, 103],
    );
    assert.equal(page.data[0].estimatedStartAt, null, 'a pool without devices has no estimate');
    assert.equal(page.data[0].waitReason, 'capacity');
    await c.sql.query(`DELETE FROM jobs WHERE pool = 'nowhere'`);
  },
);
