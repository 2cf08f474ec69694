import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { defaultPolicy } from '../../scheduler/core/policy.js';
import { modelParameters, planJob } from '../../scheduler/planner/plan-job.js';
import { readSnapshot } from '../../scheduler/rounds/read-snapshot.js';
import { startRoundLoop } from '../../scheduler/rounds/round-loop.js';
import { publishQueueViews } from '../helpers/queue-views.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let alice: TestTenant;

before(async () => {
  h = await startHarness();
  alice = await h.createTenant('alice');
});
after(() => h.close());

const minimal = { name: 'my-run', workflow: { task: { name: 'addition' } } };

describe('POST /v1/jobs', () => {
  // A connected subscriber keeps the process alive: disconnected after the test whatever its outcome
  // (a failed assertion left it open and the file hung instead of failing), and a wake-up that never
  // comes fails the test at its timeout instead of waiting forever.
  test(
    'accepts the minimal spec, fills defaults, commits and wakes the scheduler',
    { timeout: 30_000 },
    async (t) => {
      const sub = new Redis(h.config.REDIS_URL);
      t.after(() => sub.disconnect());
      await sub.subscribe(h.api.deps.names.schedulerChannel);
      const woken = new Promise<string>((resolve) =>
        sub.once('message', (_c: string, m: string) => resolve(m)),
      );
      const res = await alice.as(h.http.post('/v1/jobs')).send(minimal).expect(201);
      const job = res.body;
      assert.equal(job.object, 'job');
      assert.equal(job.status, 'queued');
      // No round has looked at it yet: nobody has said why it waits, or where.
      assert.deepEqual([job.waitReason, job.queuePosition, job.estimatedStartAt], [null, null, null]);
      assert.equal(job.spec.workflow.algorithm, 'grpo');
      assert.equal(job.spec.workflow.model.preset, 'tiny');
      assert.equal(job.spec.resources.devices, 1);
      assert.equal(job.priority, 'normal');
      // The queue is the row itself; the scheduler was woken for it.
      assert.equal(await woken, '1');
      const events = await alice.as(h.http.get(`/v1/jobs/${job.id}/events`)).expect(200);
      assert.deepEqual(
        events.body.data.map((e: { type: string }) => e.type),
        ['job.queued'],
      );
    },
  );

  test('the created job in the response is the job as stored (GET returns the same object)', async () => {
    const spec = { ...minimal, name: 'same-as-stored', priority: 'high', maxAttempts: 5 };
    const posted = await alice.as(h.http.post('/v1/jobs')).send(spec).expect(201);
    const got = await alice.as(h.http.get(`/v1/jobs/${posted.body.id}`)).expect(200);
    // Only the queue position is computed at read time.
    assert.deepEqual({ ...posted.body, queuePosition: got.body.queuePosition }, got.body);
    const keyed = await alice
      .as(h.http.post('/v1/jobs'))
      .set('Idempotency-Key', 'stored-shape')
      .send({ ...spec, name: 'keyed' })
      .expect(201);
    const gotKeyed = await alice.as(h.http.get(`/v1/jobs/${keyed.body.id}`)).expect(200);
    assert.deepEqual({ ...keyed.body, queuePosition: gotKeyed.body.queuePosition }, gotKeyed.body);
  });

  test('the same Idempotency-Key and body return the same job; another body is 409', async () => {
    const key = 'retry-123';
    const a = await alice.as(h.http.post('/v1/jobs')).set('Idempotency-Key', key).send(minimal).expect(201);
    const b = await alice.as(h.http.post('/v1/jobs')).set('Idempotency-Key', key).send(minimal).expect(201);
    assert.equal(b.body.id, a.body.id);
    assert.equal(b.headers['idempotent-replayed'], 'true');
    const c = await alice
      .as(h.http.post('/v1/jobs'))
      .set('Idempotency-Key', key)
      .send({ ...minimal, name: 'other' })
      .expect(409);
    assert.equal(c.body.error.code, 'conflict');
    assert.equal(c.body.error.param, 'Idempotency-Key');
  });

  test('concurrent requests with one Idempotency-Key create one job', async () => {
    const key = 'concurrent-key';
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        alice.as(h.http.post('/v1/jobs')).set('Idempotency-Key', key).send(minimal),
      ),
    );
    assert.ok(results.every((r) => r.status === 201));
    assert.equal(new Set(results.map((r) => r.body.id)).size, 1);
  });
});

describe('a job started from a checkpoint', () => {
  /** A job of `tenant`'s with a checkpoint row (the API reads only the row, not its files). */
  async function withCheckpoint(tenant: TestTenant, spec: object) {
    const job = (await tenant.as(h.http.post('/v1/jobs')).send(spec).expect(201)).body;
    const ck = await h.api.deps.db.pool.query(
      `INSERT INTO checkpoints (job_id, step, size_bytes, sha256, storage_key)
       VALUES ($1, 20, 1, $2, 'unused') RETURNING id`,
      [job.id, '0'.repeat(64)],
    );
    return { jobId: job.id as string, checkpointId: ck.rows[0].id as string };
  }
  const source = {
    name: 'rev-micro',
    workflow: { model: { preset: 'micro' }, task: { name: 'reversal', minLength: 2, maxLength: 8, seed: 7 } },
  };
  // What the worker runs for it: the learner restored from the checkpoint (its model, task and
  // random state), every other engine built like the learner.
  const ran = {
    model: { preset: 'micro', dModel: 32, layers: 1, heads: 2, contextLength: 32 },
    task: { name: 'reversal', minLength: 2, maxLength: 8, seed: 7 },
  };

  // The stored spec said the defaults (a tiny model, reversal 3..6, seed 1): the API, the SDK and
  // the CLI showed a job that was not the one running, and its checkpoints' meta.task said the same.
  test("its spec as stored and returned is the checkpoint's model and task", async () => {
    const frank = await h.createTenant('frank-from-ck');
    const ck = await withCheckpoint(frank, source);
    const body = { name: 'from-ck', initialCheckpoint: ck, workflow: { task: { name: 'reversal' } } };
    const posted = (await frank.as(h.http.post('/v1/jobs')).send(body).expect(201)).body;
    const got = (await frank.as(h.http.get(`/v1/jobs/${posted.id}`)).expect(200)).body;
    for (const job of [posted, got]) {
      assert.deepEqual(job.spec.workflow.model, ran.model);
      assert.deepEqual(job.spec.workflow.task, ran.task);
    }
    // A checkpoint of that job: the chain's first job is what it runs too.
    const ck2 = await h.api.deps.db.pool.query(
      `INSERT INTO checkpoints (job_id, step, size_bytes, sha256, storage_key)
       VALUES ($1, 20, 1, $2, 'unused') RETURNING id`,
      [posted.id, '0'.repeat(64)],
    );
    const grandchild = (
      await frank
        .as(h.http.post('/v1/jobs'))
        .send({
          name: 'from-from-ck',
          initialCheckpoint: { jobId: posted.id, checkpointId: ck2.rows[0].id },
          workflow: { task: { name: 'reversal' } },
        })
        .expect(201)
    ).body;
    assert.deepEqual(grandchild.spec.workflow.model, ran.model);
    assert.deepEqual(grandchild.spec.workflow.task, ran.task);
  });

  // The planner sized it from the spec's model: one that left the model out was planned as tiny
  // (its memory, its step-time prior, its packing) whatever the checkpoint's model.
  test("the scheduler plans it as its checkpoint's job is planned", async () => {
    const grace = await h.createTenant('grace-from-ck');
    const ck = await withCheckpoint(grace, { ...source, pool: 'ck-plan' });
    const job = (
      await grace
        .as(h.http.post('/v1/jobs'))
        .send({
          name: 'from-ck',
          pool: 'ck-plan',
          initialCheckpoint: ck,
          workflow: { task: { name: 'reversal' } },
        })
        .expect(201)
    ).body;
    const { snapshot } = await readSnapshot(h.api.deps.db.pool, 10_000);
    const queued = (id: string) => snapshot.queued.find((q) => q.id === id)!;
    const plan = (id: string) =>
      planJob({
        workload: queued(id).workload,
        devices: 1,
        maxDevices: 1,
        memoryPerDeviceBytes: null,
        profile: null,
      });
    assert.equal(queued(job.id).workload.parameters, modelParameters({ preset: 'micro' }));
    assert.deepEqual(queued(job.id).workload, queued(ck.jobId).workload);
    assert.equal(plan(job.id).deviceBytes, plan(ck.jobId).deviceBytes);
    assert.equal(plan(job.id).stepSeconds, plan(ck.jobId).stepSeconds);
  });

  // The stored spec is rewritten; the key still answers for the body the client sent.
  test('the same Idempotency-Key and body replay it; another body is 409', async () => {
    const heidi = await h.createTenant('heidi-from-ck');
    const ck = await withCheckpoint(heidi, source);
    const body = { name: 'from-ck', initialCheckpoint: ck, workflow: { task: { name: 'reversal' } } };
    const post = (b: object) => heidi.as(h.http.post('/v1/jobs')).set('Idempotency-Key', 'ck-retry').send(b);
    const a = await post(body).expect(201);
    const b = await post(body).expect(201);
    assert.equal(b.body.id, a.body.id);
    assert.equal(b.headers['idempotent-replayed'], 'true');
    assert.deepEqual(b.body.spec, a.body.spec);
    // The same job would be stored for it, but it is not the request the key was used with.
    const c = await post({ ...body, workflow: { task: ran.task, model: ran.model } }).expect(409);
    assert.equal(c.body.error.param, 'Idempotency-Key');
    // The checkpoint is gone since (retention): a retry still replays (before: 400, no such checkpoint).
    await h.api.deps.db.pool.query('DELETE FROM checkpoints WHERE id = $1', [ck.checkpointId]);
    const d = await post(body).expect(201);
    assert.equal(d.body.id, a.body.id);
    assert.equal(d.headers['idempotent-replayed'], 'true');
    // And a new request naming it is refused.
    await heidi.as(h.http.post('/v1/jobs')).send(body).expect(400);
  });
});

describe('GET /v1/jobs', () => {
  test('pages newest first with a cursor and filters by status and name', async () => {
    const bob = await h.createTenant('bob-pages');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await bob
        .as(h.http.post('/v1/jobs'))
        .send({ ...minimal, name: i % 2 ? 'odd' : 'even' })
        .expect(201);
      ids.push(r.body.id);
    }
    const page1 = await bob.as(h.http.get('/v1/jobs?limit=2')).expect(200);
    assert.deepEqual(
      page1.body.data.map((j: { id: string }) => j.id),
      [ids[4], ids[3]],
    );
    assert.ok(page1.body.nextCursor);
    const page2 = await bob.as(h.http.get(`/v1/jobs?limit=2&after=${page1.body.nextCursor}`)).expect(200);
    assert.deepEqual(
      page2.body.data.map((j: { id: string }) => j.id),
      [ids[2], ids[1]],
    );
    const page3 = await bob.as(h.http.get(`/v1/jobs?limit=2&after=${page2.body.nextCursor}`)).expect(200);
    assert.deepEqual(
      page3.body.data.map((j: { id: string }) => j.id),
      [ids[0]],
    );
    assert.equal(page3.body.nextCursor, null);
    const odd = await bob.as(h.http.get('/v1/jobs?name=odd')).expect(200);
    assert.equal(odd.body.data.length, 2);
    await bob.as(h.http.post(`/v1/jobs/${ids[0]}/cancel`)).expect(200);
    const cancelled = await bob.as(h.http.get('/v1/jobs?status=cancelled')).expect(200);
    assert.deepEqual(
      cancelled.body.data.map((j: { id: string }) => j.id),
      [ids[0]],
    );
  });

  test('GET /v1/jobs/{id} shows the queue position of a queued job', async () => {
    const carol = await h.createTenant('carol-pos');
    const first = await carol
      .as(h.http.post('/v1/jobs'))
      .send({ ...minimal, pool: 'pos-pool' })
      .expect(201);
    const second = await carol
      .as(h.http.post('/v1/jobs'))
      .send({ ...minimal, pool: 'pos-pool' })
      .expect(201);
    const urgent = await carol
      .as(h.http.post('/v1/jobs'))
      .send({ ...minimal, pool: 'pos-pool', priority: 'urgent' })
      .expect(201);
    // One scheduling round publishes the queue view (the harness runs no scheduler process).
    await publishQueueViews(h, defaultPolicy);
    const get = async (id: string) => (await carol.as(h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
    const pos = async (id: string) => (await get(id)).queuePosition;
    const view = await get(urgent.body.id);
    assert.equal(view.waitReason, 'capacity', 'a pool with no nodes');
    assert.equal(view.estimatedStartAt, null, 'no devices, no estimate');
    assert.equal(await pos(urgent.body.id), 1);
    assert.equal(await pos(first.body.id), 2);
    assert.equal(await pos(second.body.id), 3);
  });
});

describe('the wait reason of a fresh job', () => {
  test('null until a round judges it; the first round states it and stores it', async () => {
    const { pool } = h.api.deps.db;
    const { redis, names } = h.api.deps;
    const dave = await h.createTenant('dave-fresh');
    const created = await dave
      .as(h.http.post('/v1/jobs'))
      .send({ ...minimal, pool: 'fresh-pool' })
      .expect(201);
    const id = created.body.id as string;
    const get = async () => (await dave.as(h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
    const facts = (j: Record<string, unknown>) => [j.waitReason, j.queuePosition, j.estimatedStartAt];
    const stored = async () =>
      (await pool.query(`SELECT wait_reason FROM jobs WHERE id = $1`, [id])).rows[0].wait_reason;
    assert.deepEqual(facts(created.body), [null, null, null]);
    assert.deepEqual(facts(await get()), [null, null, null]);
    assert.equal(await stored(), null);

    // The scheduler's own loop (the harness runs none) until its first round has committed.
    const subscriber = new Redis(h.config.REDIS_URL);
    const loop = startRoundLoop({
      pool,
      redis,
      subscriber,
      names,
      logger: h.api.deps.logger,
      options: {
        holder: 'jobs-test',
        policy: defaultPolicy,
        intervalMs: 60_000,
        leaseMs: 30_000,
        heartbeatTimeoutMs: 60_000,
        usageHalfLifeSeconds: 3600,
      },
    });
    try {
      for (let i = 0; loop.stats.rounds === 0; i++) {
        assert.ok(i < 500, 'a round within 10 s');
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await loop.close();
      subscriber.disconnect();
    }
    assert.deepEqual(facts(await get()), ['capacity', 1, null], 'a pool with no nodes');
    // Stored too, so it outlives the queue view (derived data in Redis, rewritten each round).
    assert.equal(await stored(), 'capacity');
    await redis.del(names.queueViewKey);
    assert.deepEqual(facts(await get()), ['capacity', null, null]);
  });
});

describe('POST /v1/jobs/{id}/cancel', () => {
  test('cancels a queued job, frees its quota slot, and is idempotent', async () => {
    const dave = await h.createTenant('dave-cancel', { maxActiveJobs: 1 });
    const job = (await dave.as(h.http.post('/v1/jobs')).send(minimal).expect(201)).body;
    await dave.as(h.http.post('/v1/jobs')).send(minimal).expect(429);
    const c1 = await dave.as(h.http.post(`/v1/jobs/${job.id}/cancel`)).expect(200);
    assert.equal(c1.body.status, 'cancelled');
    assert.ok(c1.body.finishedAt);
    const c2 = await dave.as(h.http.post(`/v1/jobs/${job.id}/cancel`)).expect(200);
    assert.equal(c2.body.status, 'cancelled');
    assert.equal(c2.body.finishedAt, c1.body.finishedAt);
    const events = await dave.as(h.http.get(`/v1/jobs/${job.id}/events`)).expect(200);
    assert.deepEqual(
      events.body.data.map((e: { type: string }) => e.type),
      ['job.queued', 'job.cancelled'],
    );
    await dave.as(h.http.post('/v1/jobs')).send(minimal).expect(201);
  });

  test('a finished job cannot be cancelled (409)', async () => {
    const erin = await h.createTenant('erin-final');
    const job = (await erin.as(h.http.post('/v1/jobs')).send(minimal).expect(201)).body;
    await h.api.deps.db.pool.query(`UPDATE jobs SET status = 'succeeded' WHERE id = $1`, [job.id]);
    const r = await erin.as(h.http.post(`/v1/jobs/${job.id}/cancel`)).expect(409);
    assert.equal(r.body.error.code, 'conflict');
  });
});
