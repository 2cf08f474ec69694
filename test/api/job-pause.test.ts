/**
 * Pause and resume through the API (api/jobs/pause.ts): the row, the events, the job as its tenant
 * reads it, idempotency, finished jobs and other tenants' jobs. What the scheduler does with a paused
 * job is scheduler/core/test/pause.test.ts (the round) and test/e2e/control.test.ts (a real run).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let t: TestTenant;
let other: TestTenant;

before(async () => {
  h = await startHarness();
  t = await h.createTenant('pauser');
  other = await h.createTenant('bystander');
});
after(() => h.close());

const submit = async () =>
  (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'pausable', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;

const eventTypes = async (id: string) =>
  ((await t.as(h.http.get(`/v1/jobs/${id}/events`)).expect(200)).body.data as { type: string }[]).map(
    (e) => e.type,
  );

test('a paused queued job waits as paused, with no position or estimate, until resumed', async () => {
  const id = await submit();
  const paused = await t.as(h.http.post(`/v1/jobs/${id}/pause`)).expect(200);
  assert.equal(paused.body.status, 'queued');
  assert.ok(paused.body.pausedAt, 'pausedAt set');
  const read = await t.as(h.http.get(`/v1/jobs/${id}`)).expect(200);
  assert.equal(read.body.waitReason, 'paused');
  assert.equal(read.body.queuePosition, null);
  assert.equal(read.body.estimatedStartAt, null);
  // In lists too, and the job still counts as active for its tenant.
  const list = await t.as(h.http.get('/v1/jobs?status=queued')).expect(200);
  assert.equal(list.body.data.find((j: { id: string }) => j.id === id).waitReason, 'paused');

  const queuedAt = async () =>
    (await h.api.deps.db.pool.query(`SELECT queued_at FROM jobs WHERE id = $1`, [id])).rows[0]
      .queued_at as Date;
  const before = await queuedAt();
  const resumed = await t.as(h.http.post(`/v1/jobs/${id}/resume`)).expect(200);
  assert.equal(resumed.body.pausedAt, null);
  // Its wait (and the aging bound) counts from the resume, not from before the pause.
  assert.ok((await queuedAt()).getTime() > before.getTime());
  assert.notEqual(resumed.body.waitReason, 'paused');
  assert.deepEqual(
    (await eventTypes(id)).filter((e) => e === 'job.paused' || e === 'job.resumed'),
    ['job.paused', 'job.resumed'],
  );
});

test('pause and resume are idempotent: a repeat returns the job and writes no event', async () => {
  const id = await submit();
  const first = await t.as(h.http.post(`/v1/jobs/${id}/pause`)).expect(200);
  const again = await t.as(h.http.post(`/v1/jobs/${id}/pause`)).expect(200);
  assert.equal(again.body.pausedAt, first.body.pausedAt, 'paused since the first request');
  await t.as(h.http.post(`/v1/jobs/${id}/resume`)).expect(200);
  await t.as(h.http.post(`/v1/jobs/${id}/resume`)).expect(200);
  const types = await eventTypes(id);
  assert.equal(types.filter((e) => e === 'job.paused').length, 1);
  assert.equal(types.filter((e) => e === 'job.resumed').length, 1);
});

test('a finished job is 409 conflict for both; a cancelled paused job reads as not paused', async () => {
  const id = await submit();
  await t.as(h.http.post(`/v1/jobs/${id}/pause`)).expect(200);
  const cancelled = await t.as(h.http.post(`/v1/jobs/${id}/cancel`)).expect(200);
  assert.equal(cancelled.body.status, 'cancelled');
  assert.equal(cancelled.body.pausedAt, null);
  for (const action of ['pause', 'resume']) {
    const r = await t.as(h.http.post(`/v1/jobs/${id}/${action}`)).expect(409);
    assert.equal(r.body.error.code, 'conflict');
    assert.match(r.body.error.message, /finished with status cancelled/);
  }
});

test("another tenant's job is not found, and nothing changes", async () => {
  const id = await submit();
  for (const action of ['pause', 'resume']) {
    const r = await other.as(h.http.post(`/v1/jobs/${id}/${action}`)).expect(404);
    assert.equal(r.body.error.code, 'not_found');
  }
  await other.as(h.http.post(`/v1/jobs/not-a-uuid/pause`)).expect(404);
  const read = await t.as(h.http.get(`/v1/jobs/${id}`)).expect(200);
  assert.equal(read.body.pausedAt, null);
  assert.ok(!(await eventTypes(id)).includes('job.paused'));
});

test('the admin key cannot pause a job: tenants pause their own', async () => {
  const id = await submit();
  await h.admin(h.http.post(`/v1/jobs/${id}/pause`)).expect(403);
});

/** Runs `change` on the job's row in a transaction held open while `request` is sent, then commits. */
async function whileRowHeld(
  id: string,
  change: string,
  request: () => Promise<{ status: number; body: { pausedAt?: string | null } }>,
) {
  const { pool } = h.api.deps.db;
  const tx = await pool.connect();
  try {
    await tx.query('BEGIN');
    await tx.query(change, [id]);
    const answer = request();
    // The request waits on the row lock: commit once it does.
    for (;;) {
      const r = await pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (r.rows[0].n > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await tx.query('COMMIT');
    return await answer;
  } finally {
    tx.release();
  }
}

test('a pause that waited on a concurrent change answers the job as that change left it', async () => {
  // Paused meanwhile (a double click): the answer is paused, not the row as it was before.
  const a = await submit();
  const r = await whileRowHeld(a, `UPDATE jobs SET paused_at = now() WHERE id = $1`, () =>
    t.as(h.http.post(`/v1/jobs/${a}/pause`)).then((x) => x),
  );
  assert.equal(r.status, 200);
  assert.ok(r.body.pausedAt, 'paused');
  // Finished meanwhile: 409, not the job as it was.
  const b = await submit();
  const f = await whileRowHeld(
    b,
    `UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = $1`,
    () => t.as(h.http.post(`/v1/jobs/${b}/pause`)).then((x) => x),
  );
  assert.equal(f.status, 409, JSON.stringify(f.body));
});
