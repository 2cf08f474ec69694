import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../helpers/api-harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const spec = (devices = 1) => ({
  name: 'q',
  resources: { devices },
  workflow: { task: { name: 'addition' } },
});

test('100 concurrent submissions against a quota of 10 active jobs admit exactly 10', async () => {
  const t = await h.createTenant('racer', { maxActiveJobs: 10 });
  const results = await Promise.all(
    Array.from({ length: 100 }, () => t.as(h.http.post('/v1/jobs')).send(spec())),
  );
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 201).length, 10);
  assert.equal(statuses.filter((s) => s === 429).length, 90);
  const rejected = results.find((r) => r.status === 429)!;
  assert.equal(rejected.body.error.code, 'quota_exceeded');
  assert.match(rejected.body.error.message, /maxActiveJobs \(limit 10\)/);
  const rows = await h.api.deps.db.pool.query(
    `SELECT (SELECT count(*) FROM jobs WHERE tenant_id = $1)::int AS jobs,
            (SELECT count(*) FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE j.tenant_id = $1)::int AS events,
            (SELECT active_jobs FROM quotas WHERE tenant_id = $1) AS active`,
    [t.id],
  );
  assert.deepEqual(rows.rows[0], { jobs: 10, events: 10, active: 10 });
});

test('device quotas are named with their limits and the offending field', async () => {
  const t = await h.createTenant('devices', { maxDevicesPerJob: 2, maxConcurrentDevices: 8 });
  const perJob = await t.as(h.http.post('/v1/jobs')).send(spec(3)).expect(429);
  assert.match(perJob.body.error.message, /maxDevicesPerJob \(limit 2\)/);
  assert.equal(perJob.body.error.param, 'resources.devices');
  await h
    .admin(h.http.put(`/v1/tenants/${t.id}/quota`))
    .send({ maxDevicesPerJob: 16, maxConcurrentDevices: 4 })
    .expect(200);
  const concurrent = await t.as(h.http.post('/v1/jobs')).send(spec(6)).expect(429);
  assert.match(concurrent.body.error.message, /maxConcurrentDevices \(limit 4\)/);
  await t.as(h.http.post('/v1/jobs')).send(spec(4)).expect(201);
});

test('device-hours per month: a tenant that used its hours this month is refused; last month does not count', async () => {
  const t = await h.createTenant('hours', { deviceHoursPerMonth: 1 });
  const { pool } = h.api.deps.db;
  await pool.query(
    `UPDATE quotas SET period_device_seconds = 3600, period_start = date_trunc('month', now()) WHERE tenant_id = $1`,
    [t.id],
  );
  const res = await t.as(h.http.post('/v1/jobs')).send(spec()).expect(429);
  assert.match(res.body.error.message, /deviceHoursPerMonth \(limit 1\)/);
  await pool.query(
    `UPDATE quotas SET period_start = date_trunc('month', now()) - interval '1 month' WHERE tenant_id = $1`,
    [t.id],
  );
  await t.as(h.http.post('/v1/jobs')).send(spec()).expect(201);
  const usage = await t.as(h.http.get('/v1/usage')).expect(200);
  assert.equal(usage.body.deviceSecondsUsed, 0);
});

test('quota can be read and partially updated by the admin', async () => {
  const t = await h.createTenant('partial');
  const before = await h.admin(h.http.get(`/v1/tenants/${t.id}/quota`)).expect(200);
  const after = await h
    .admin(h.http.put(`/v1/tenants/${t.id}/quota`))
    .send({ maxActiveJobs: 3 })
    .expect(200);
  assert.deepEqual(after.body, { ...before.body, maxActiveJobs: 3 });
});

test('a quota value that is no number of its kind says what the field takes (400 invalid_request)', async () => {
  const t = await h.createTenant('plain-words');
  const before = await h.admin(h.http.get(`/v1/tenants/${t.id}/quota`)).expect(200);
  const cases: [Record<string, unknown>, string][] = [
    [{ maxActiveJobs: null }, 'maxActiveJobs: must be a whole number from 0 to 1000000'],
    [{ maxActiveJobs: '5' }, 'maxActiveJobs: must be a whole number from 0 to 1000000'],
    [{ maxConcurrentDevices: 2.5 }, 'maxConcurrentDevices: must be a whole number from 0 to 1000000'],
    [{ maxDevicesPerJob: -1 }, 'maxDevicesPerJob: must be a whole number from 0 to 1000000'],
    [{ maxDevicesPerJob: 1_000_001 }, 'maxDevicesPerJob: must be a whole number from 0 to 1000000'],
    [{ deviceHoursPerMonth: 'lots' }, 'deviceHoursPerMonth: must be a number from 0 to 1000000000'],
    [{ deviceHoursPerMonth: null }, 'deviceHoursPerMonth: must be a number from 0 to 1000000000'],
  ];
  for (const [body, message] of cases) {
    const res = await h
      .admin(h.http.put(`/v1/tenants/${t.id}/quota`))
      .send(body)
      .expect(400);
    assert.equal(res.body.error.code, 'invalid_request', JSON.stringify(body));
    assert.equal(res.body.error.message, message, JSON.stringify(body));
    assert.equal(res.body.error.param, Object.keys(body)[0]);
  }
  assert.deepEqual((await h.admin(h.http.get(`/v1/tenants/${t.id}/quota`)).expect(200)).body, before.body);
});
