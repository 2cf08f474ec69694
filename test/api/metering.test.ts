/**
 * Per-second metering: the device-seconds a node reports are recorded split into running (the
 * engine computing), switching (onload/offload) and idle-held time, from the stage profiles of the
 * same report, and `GET /v1/usage` serves the split for the tenant this month and for each job —
 * to that tenant only. A charge bounded by wall time × devices keeps its states' proportions.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type request from 'supertest';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

type As = (r: request.Test) => request.Test;

let h: Harness;
let acme: TestTenant;
let rival: TestTenant;
let node: As;
let nodeId: string;

const device = (index: number) => ({ index, kind: 'cpu-virtual', memoryBytes: 1e9, freeMemoryBytes: 1e9 });

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
  rival = await h.createTenant('rival');
  const key = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'meter' }).expect(201);
  const tok = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
  node = (r) => r.set('Authorization', `Bearer ${tok.body.token}`);
  nodeId = (
    await node(h.http.post('/v1/nodes/register'))
      .send({ name: 'meter-node', devices: [device(0), device(1)] })
      .expect(200)
  ).body.id;
});
after(() => h.close());

/** A job of `t` placed on both devices `placedSecondsAgo` ago (the leader's write, done by hand). */
async function running(t: TestTenant, name: string, placedSecondsAgo: number): Promise<string> {
  const id = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name, resources: { devices: 2 }, workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
  const pool = h.api.deps.db.pool;
  await pool.query(
    `INSERT INTO scheduler_leases (name, holder, epoch, expires_at)
     VALUES ('scheduler', 'metering-test', 1, now() + interval '1 hour') ON CONFLICT (name) DO NOTHING`,
  );
  await pool.query(
    `UPDATE jobs SET status = 'placed', node_id = $2, sched_epoch = 1,
       placed_at = now() - make_interval(secs => $3), placement = '{"devices": [0, 1]}'::jsonb WHERE id = $1`,
    [id, nodeId, placedSecondsAgo],
  );
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${id}/start`))
    .send({ queueSeq: 0 })
    .expect(200);
  return id;
}

/** One hold on 2 devices as the stage loop reports it: seconds, onload/offload, engine compute. */
const hold = (seconds: number, onload: number, offload: number, compute: number | null) => ({
  queueSeq: 0,
  reportSeq: 1,
  profiles: [
    {
      stage: 'rl_step',
      step: 1,
      seconds,
      devices: 2,
      onloadSeconds: onload,
      offloadSeconds: offload,
      ...(compute === null ? {} : { computeSeconds: compute }),
    },
  ],
  deviceSeconds: seconds * 2,
});

const close = (a: number, b: number) => Math.abs(a - b) < 1e-6;

test('reported holds are metered by state, per job and per tenant, and only to their tenant', async () => {
  const a = await running(acme, 'metered-a', 3600);
  const b = await running(acme, 'metered-b', 3600);
  const report = (id: string, body: object) =>
    node(h.http.post(`/v1/nodes/${nodeId}/jobs/${id}/report`))
      .send(body)
      .expect(200);
  // a: 10 s held: 1 s onload, 1 s offload, 6 s computing → 2 s idle; × 2 devices.
  await report(a, hold(10, 1, 1, 6));
  // b: an older daemon (no compute figure): the run counts as running.
  await report(b, hold(4, 0.5, 0.5, null));

  const usage = (await acme.as(h.http.get('/v1/usage')).expect(200)).body;
  const s = usage.deviceSecondsByState;
  assert.ok(close(s.running, 12 + 6) && close(s.switching, 4 + 2) && close(s.idle, 4), JSON.stringify(s));
  assert.ok(close(s.running + s.switching + s.idle, usage.deviceSecondsUsed));
  assert.ok(close(usage.deviceSecondsUsed, 28));
  const byJob = new Map(usage.jobs.map((j: { jobId: string }) => [j.jobId, j]));
  assert.deepEqual(byJob.get(a), {
    jobId: a,
    name: 'metered-a',
    status: 'running',
    deviceSeconds: 20,
    deviceSecondsByState: { running: 12, switching: 4, idle: 4 },
  });
  assert.deepEqual((byJob.get(b) as { deviceSecondsByState: object }).deviceSecondsByState, {
    running: 6,
    switching: 2,
    idle: 0,
  });
  assert.deepEqual(
    usage.jobs.map((j: { jobId: string }) => j.jobId),
    [a, b],
    'most device-seconds first',
  );

  const theirs = (await rival.as(h.http.get('/v1/usage')).expect(200)).body;
  assert.equal(theirs.deviceSecondsUsed, 0);
  assert.deepEqual(theirs.jobs, []);
  assert.deepEqual(theirs.deviceSecondsByState, { running: 0, switching: 0, idle: 0 });
});

test('a charge bounded by wall time × devices keeps the proportions of its states', async () => {
  const c = await running(acme, 'metered-bounded', 5);
  // Claims 2 × 1000 device-seconds on a placement 5 s old on 2 devices: about 10 are recorded.
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${c}/report`))
    .send(hold(1000, 100, 100, 400))
    .expect(200);
  const j = (await acme.as(h.http.get('/v1/usage')).expect(200)).body.jobs.find(
    (x: { jobId: string }) => x.jobId === c,
  );
  assert.ok(j.deviceSeconds > 9 && j.deviceSeconds < 12, `recorded ${j.deviceSeconds}`);
  const s = j.deviceSecondsByState;
  assert.ok(close(s.running + s.switching + s.idle, j.deviceSeconds));
  // 400 : 200 : 400 of the claim.
  assert.ok(close(s.running / j.deviceSeconds, 0.4) && close(s.switching / j.deviceSeconds, 0.2));
  assert.ok(close(s.idle / j.deviceSeconds, 0.4));
});

test('compute figures outside the hold are refused or clamped', async () => {
  const d = await running(acme, 'metered-odd', 3600);
  const bad = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${d}/report`))
    .send({ ...hold(1, 0, 0, null), profiles: [{ ...hold(1, 0, 0, null).profiles[0], computeSeconds: -1 }] })
    .expect(400);
  assert.equal(bad.body.error.code, 'invalid_request');
  assert.equal(bad.body.error.param, 'profiles.0.computeSeconds');
  // More compute than the hold's run: clamped to the run, nothing negative.
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${d}/report`))
    .send(hold(2, 0.5, 0.5, 9))
    .expect(200);
  const j = (await acme.as(h.http.get('/v1/usage')).expect(200)).body.jobs.find(
    (x: { jobId: string }) => x.jobId === d,
  );
  assert.deepEqual(j.deviceSecondsByState, { running: 2, switching: 2, idle: 0 });
});
