import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { AdmissionBatcher } from '../../api/jobs/admission-batcher.js';
import { ApiError } from '../../common/errors.js';
import { jobSpecSchema, type JobSpec } from '../../common/job-spec.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const spec = (name: string, devices = 1): JobSpec =>
  jobSpecSchema.parse({ name, resources: { devices }, workflow: { task: { name: 'addition' } } });

type Outcome = { ok: true; id: string } | { ok: false; code: string; quota?: string };

async function outcome(p: Promise<{ job: { id: string } }>): Promise<Outcome> {
  try {
    return { ok: true, id: (await p).job.id };
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return { ok: false, code: err.code, quota: (err.details as { quota?: string } | undefined)?.quota };
  }
}

test('one batch of two tenants: each element is admitted or refused exactly as alone, in arrival order', async () => {
  const a = await h.createTenant('batch-a', { maxActiveJobs: 3, maxDevicesPerJob: 2 });
  const b = await h.createTenant('batch-b', { maxActiveJobs: 5 });
  // One batch in flight at a time: the first call goes alone, the other 15 wait and form one batch.
  const batcher = new AdmissionBatcher(h.api.deps.db.pool, { maxBatch: 64, maxInFlight: 1 });
  const calls = [
    batcher.admit(b.id, spec('b0')),
    ...Array.from({ length: 15 }, (_, i) =>
      i % 2 ? batcher.admit(a.id, spec(`a${i}`, i === 1 ? 4 : 1)) : batcher.admit(b.id, spec(`b${i + 1}`)),
    ),
  ];
  const results = await Promise.all(calls.map(outcome));
  const names = ['b0', ...Array.from({ length: 15 }, (_, i) => (i % 2 ? `a${i}` : `b${i + 1}`))];
  const byName = new Map(names.map((n, i) => [n, results[i]!]));

  // a1 asks for 4 devices (limit 2); a3, a5, a7 take tenant A's 3 slots; a9..a13 find it full.
  assert.deepEqual(byName.get('a1'), { ok: false, code: 'quota_exceeded', quota: 'maxDevicesPerJob' });
  for (const n of ['a3', 'a5', 'a7']) assert.equal(byName.get(n)!.ok, true, n);
  for (const n of ['a9', 'a11', 'a13'])
    assert.deepEqual(byName.get(n), { ok: false, code: 'quota_exceeded', quota: 'maxActiveJobs' });
  // Tenant B: b0 (alone) and the first four of the batch fit its 5; the rest are refused.
  const bResults = names.filter((n) => n.startsWith('b')).map((n) => byName.get(n)!.ok);
  assert.deepEqual(bResults, [true, true, true, true, true, false, false, false, false]);

  const { pool } = h.api.deps.db;
  const counts = await pool.query(
    `SELECT t.id, q.active_jobs,
            (SELECT count(*) FROM jobs j WHERE j.tenant_id = t.id)::int AS jobs,
            (SELECT count(*) FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.tenant_id = t.id)::int AS events
       FROM tenants t JOIN quotas q ON q.tenant_id = t.id WHERE t.id = ANY($1)`,
    [[a.id, b.id]],
  );
  const row = (id: string) => counts.rows.find((r) => r.id === id);
  assert.deepEqual({ ...row(a.id), id: undefined }, { id: undefined, active_jobs: 3, jobs: 3, events: 3 });
  assert.deepEqual({ ...row(b.id), id: undefined }, { id: undefined, active_jobs: 5, jobs: 5, events: 5 });
  // Each admitted element got its own job, with its own name.
  for (const [n, r] of byName) {
    if (!r.ok) continue;
    const job = await pool.query('SELECT name FROM jobs WHERE id = $1', [r.id]);
    assert.equal(job.rows[0]?.name, n);
  }
});

test('an element PostgreSQL cannot store fails alone: the rest of its batch is admitted', async () => {
  const t = await h.createTenant('batch-poison');
  const batcher = new AdmissionBatcher(h.api.deps.db.pool, { maxBatch: 64, maxInFlight: 1 });
  const first = batcher.admit(t.id, spec('first'));
  // jsonb cannot hold U+0000: this element makes the batch's statement fail as a whole.
  const poisoned = { ...spec('poison'), name: 'nul\u0000name' };
  const rest = [
    batcher.admit(t.id, spec('ok-1')),
    batcher.admit(t.id, poisoned),
    batcher.admit(t.id, spec('ok-2')),
  ];
  assert.equal((await outcome(first)).ok, true);
  const [ok1, bad, ok2] = (await Promise.allSettled(rest)) as [
    PromiseSettledResult<unknown>,
    PromiseSettledResult<unknown>,
    PromiseSettledResult<unknown>,
  ];
  assert.equal(ok1.status, 'fulfilled');
  assert.equal(ok2.status, 'fulfilled');
  assert.equal(bad.status, 'rejected');
  const n = await h.api.deps.db.pool.query('SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1', [
    t.id,
  ]);
  assert.equal(n.rows[0].n, 3);
});
