import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let t: TestTenant;

before(async () => {
  h = await startHarness({ TIMESHARE_BODY_LIMIT: '16kb' });
  t = await h.createTenant('validator');
});
after(() => h.close());

async function rowCounts() {
  const r = await h.api.deps.db.pool.query(
    `SELECT (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM job_events)::int AS events,
            (SELECT count(*) FROM idempotency_keys)::int AS keys, (SELECT active_jobs FROM quotas WHERE tenant_id = $1) AS active`,
    [t.id],
  );
  return r.rows[0];
}

const minimal = { name: 'ok', workflow: { task: { name: 'addition' } } };

describe('bad input is a 400/413 with a stable code, and writes nothing', () => {
  test('malformed JSON → 400 invalid_request', async () => {
    const before = await rowCounts();
    const res = await t
      .as(h.http.post('/v1/jobs'))
      .set('Content-Type', 'application/json')
      .set('Idempotency-Key', 'k1')
      .send('{"name": "x", ')
      .expect(400);
    assert.deepEqual(res.body, {
      error: {
        type: 'invalid_request_error',
        code: 'invalid_request',
        message: 'request body is not valid JSON',
        param: null,
      },
    });
    assert.deepEqual(await rowCounts(), before);
  });

  const cases: [string, unknown, string][] = [
    ['wrong type', { ...minimal, name: 42 }, 'name'],
    ['bad enum', { name: 'x', workflow: { task: { name: 'chess' } } }, 'workflow.task.name'],
    ['unknown field', { ...minimal, gpus: 8 }, 'gpus'],
    [
      'nested unknown field',
      { name: 'x', workflow: { task: { name: 'addition', digitz: 2 } } },
      'workflow.task.digitz',
    ],
    ['missing workflow', { name: 'x' }, 'workflow'],
    ['out of range', { ...minimal, resources: { devices: 0 } }, 'resources.devices'],
    ['cross-field', { ...minimal, resources: { devices: 4, maxDevices: 2 } }, 'resources.maxDevices'],
    ['not an object', [1, 2, 3], ''],
  ];
  for (const [label, body, param] of cases) {
    test(`${label} → 400 naming "${param}"`, async () => {
      const before = await rowCounts();
      const res = await t
        .as(h.http.post('/v1/jobs'))
        .set('Idempotency-Key', `k-${label}`)
        .send(body as object)
        .expect(400);
      assert.equal(res.body.error.code, 'invalid_request');
      assert.equal(res.body.error.param, param || null);
      assert.deepEqual(await rowCounts(), before);
    });
  }

  test('a body over the limit → 413 payload_too_large', async () => {
    const before = await rowCounts();
    const res = await t
      .as(h.http.post('/v1/jobs'))
      .send({ ...minimal, name: 'big', padding: 'x'.repeat(20_000) })
      .expect(413);
    assert.equal(res.body.error.code, 'payload_too_large');
    assert.deepEqual(await rowCounts(), before);
  });

  test('wrong types in query strings → 400 naming the parameter', async () => {
    for (const [qs, param] of [
      ['limit=abc', 'limit'],
      ['limit=0', 'limit'],
      ['limit=1000', 'limit'],
      ['status=sleeping', 'status'],
      ['after=garbage', 'after'],
      ['bogus=1', 'bogus'],
    ]) {
      const res = await t.as(h.http.get(`/v1/jobs?${qs}`)).expect(400);
      assert.equal(res.body.error.param, param, qs);
    }
    const job = (await t.as(h.http.post('/v1/jobs')).send(minimal).expect(201)).body;
    for (const [qs, param] of [
      ['from_step=x', 'from_step'],
      ['to_step=-1', 'to_step'],
      ['from_step=5&to_step=2', 'from_step'],
    ]) {
      const res = await t.as(h.http.get(`/v1/jobs/${job.id}/metrics?${qs}`)).expect(400);
      assert.equal(res.body.error.param, param, qs);
    }
    const ev = await t.as(h.http.get(`/v1/jobs/${job.id}/events?after=abc`)).expect(400);
    assert.equal(ev.body.error.param, 'after');
  });

  test('a number far past a bound is answered with that bound, not the safe-integer range', async () => {
    const steps = await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'huge', workflow: { task: { name: 'addition' }, steps: 1e300 } })
      .expect(400);
    assert.equal(steps.body.error.param, 'workflow.steps');
    assert.match(steps.body.error.message, /<=1000000\b/);
    const quota = await h
      .admin(h.http.put(`/v1/tenants/${t.id}/quota`))
      .send({ maxActiveJobs: 1e20 })
      .expect(400);
    assert.equal(quota.body.error.param, 'maxActiveJobs');
    assert.match(quota.body.error.message, /from 0 to 1000000\b/);
  });

  test('preempting a job that holds no devices is a 409, told apart from one that does not exist', async () => {
    const job = (await t.as(h.http.post('/v1/jobs')).send(minimal).expect(201)).body;
    const queued = await h.admin(h.http.post(`/v1/jobs/${job.id}/preempt`)).expect(409);
    assert.equal(queued.body.error.code, 'conflict');
    assert.match(queued.body.error.message, /queued/);
    const missing = await h.admin(h.http.post(`/v1/jobs/${randomUUID()}/preempt`)).expect(404);
    assert.equal(missing.body.error.code, 'not_found');
  });

  test('a query parameter a route does not declare, or a query that does not decode, is a 400', async () => {
    for (const [path, param] of [
      ['/v1/usage?foo=bar', 'foo'],
      ['/v1/jobs?name=%E0%A4%A', 'query'],
      ['/v1/jobs?bad%ZZ=1', 'query'],
    ] as const) {
      const res = await t.as(h.http.get(path)).expect(400);
      assert.equal(res.body.error.code, 'invalid_request', path);
      assert.equal(res.body.error.param, param, path);
    }
    const job = (await t.as(h.http.post('/v1/jobs')).send(minimal).expect(201)).body;
    assert.equal(
      (await t.as(h.http.get(`/v1/jobs/${job.id}?verbose=1`)).expect(400)).body.error.param,
      'verbose',
    );
    const before = await rowCounts();
    await t.as(h.http.post(`/v1/jobs/${job.id}/cancel?force=1`)).expect(400);
    assert.deepEqual(await rowCounts(), before, 'refused before the route ran');
    await t.as(h.http.get('/v1/usage')).expect(200);
    await t.as(h.http.get('/v1/jobs?name=caf%C3%A9+au+lait')).expect(200);
  });

  test('an over-long Idempotency-Key → 400 naming the header', async () => {
    const res = await t
      .as(h.http.post('/v1/jobs'))
      .set('Idempotency-Key', 'k'.repeat(300))
      .send(minimal)
      .expect(400);
    assert.equal(res.body.error.param, 'Idempotency-Key');
  });

  test('an initial checkpoint that is not yours → 400, nothing written', async () => {
    const before = await rowCounts();
    const res = await t
      .as(h.http.post('/v1/jobs'))
      .send({
        ...minimal,
        initialCheckpoint: {
          jobId: '00000000-0000-4000-8000-000000000000',
          checkpointId: '00000000-0000-4000-8000-000000000001',
        },
      })
      .expect(400);
    assert.equal(res.body.error.param, 'initialCheckpoint.checkpointId');
    assert.deepEqual(await rowCounts(), before);
  });

  // The engine refuses these when it is built: accepted, they were queued and failed on their first run.
  test('a model context too short for its task → 400 naming contextLength, nothing written', async () => {
    const model = { dModel: 32, layers: 1, heads: 2, contextLength: 8 };
    const short = {
      name: 'short',
      workflow: { model, task: { name: 'reversal', minLength: 16, maxLength: 16 } },
    };
    // No contextLength: the preset's 32 is the context, and 16 letters reversed need 34.
    const preset = {
      name: 'preset',
      workflow: { model: { preset: 'micro' }, task: { name: 'reversal', maxLength: 16 } },
    };
    const cases: [object, string | undefined, RegExp][] = [
      [short, 'k-context', /^workflow\.model\.contextLength: model context 8 is shorter .* \(34 tokens\)/],
      [preset, undefined, /model context 32 \(the micro preset's\) is shorter .* at least 34$/],
    ];
    for (const [body, key, message] of cases) {
      const before = await rowCounts();
      const req = t.as(h.http.post('/v1/jobs'));
      if (key) req.set('Idempotency-Key', key);
      const res = await req.send(body).expect(400);
      assert.equal(res.body.error.code, 'invalid_request');
      assert.equal(res.body.error.param, 'workflow.model.contextLength');
      assert.match(res.body.error.message, message);
      assert.deepEqual(await rowCounts(), before);
    }
    // The refusal did not use up the key: with a context that fits, the same key creates the job.
    const fits = { ...short, workflow: { ...short.workflow, model: { ...model, contextLength: 34 } } };
    await t.as(h.http.post('/v1/jobs')).set('Idempotency-Key', 'k-context').send(fits).expect(201);
  });

  test('admin quota update validates too', async () => {
    const res = await h
      .admin(h.http.put(`/v1/tenants/${t.id}/quota`))
      .send({ maxActiveJobs: -1 })
      .expect(400);
    assert.equal(res.body.error.param, 'maxActiveJobs');
  });
});

describe('a spec that contradicts its initialCheckpoint', () => {
  /** A job of this tenant's with a checkpoint row (the API reads only the row, not its files). */
  async function withCheckpoint(spec: object): Promise<{ jobId: string; checkpointId: string }> {
    const job = (await t.as(h.http.post('/v1/jobs')).send(spec).expect(201)).body;
    const ck = await h.api.deps.db.pool.query(
      `INSERT INTO checkpoints (job_id, step, size_bytes, sha256, storage_key)
       VALUES ($1, 20, 1, $2, 'unused') RETURNING id`,
      [job.id, '0'.repeat(64)],
    );
    return { jobId: job.id, checkpointId: ck.rows[0].id };
  }

  const from = (name: string, initialCheckpoint: object, workflow: object) => ({
    name,
    initialCheckpoint,
    workflow,
  });

  // The job would run the checkpoint's model and task whatever its spec says: accepted, it trained
  // something else than it asked for, without a word.
  test('another task, task size or model size → 400 naming the field, nothing written', async () => {
    const ck = await withCheckpoint({
      name: 'add-micro',
      workflow: { model: { preset: 'micro' }, task: { name: 'addition', digits: 2 } },
    });
    const ranTask = /^initialCheckpoint's job ran the addition task \(digits 2\): set workflow\.task to it/;
    const ranModel =
      /^initialCheckpoint's job ran the micro model \(dModel 32, layers 1, heads 2, contextLength 32\): set workflow\.model to it or leave it out/;
    const cases: [object, string, RegExp][] = [
      [{ task: { name: 'reversal' } }, 'workflow.task.name', ranTask],
      [{ task: { name: 'addition', digits: 3 } }, 'workflow.task.digits', ranTask],
      // The learner continues the checkpoint's random state: another seed is never used.
      [
        { task: { name: 'addition', seed: 5 } },
        'workflow.task.seed',
        /^initialCheckpoint's job ran seed 1, /,
      ],
      [{ task: { name: 'addition' }, model: { preset: 'tiny' } }, 'workflow.model.preset', ranModel],
      [{ task: { name: 'addition' }, model: { dModel: 64 } }, 'workflow.model.dModel', ranModel],
      [{ task: { name: 'addition' }, model: { layers: 2 } }, 'workflow.model.layers', ranModel],
      [{ task: { name: 'addition' }, model: { heads: 4 } }, 'workflow.model.heads', ranModel],
      [
        { task: { name: 'addition' }, model: { contextLength: 64 } },
        'workflow.model.contextLength',
        ranModel,
      ],
    ];
    for (const [workflow, param, message] of cases) {
      const before = await rowCounts();
      const res = await t
        .as(h.http.post('/v1/jobs'))
        .set('Idempotency-Key', 'k-contradicts')
        .send(from('contradicts', ck, workflow))
        .expect(400);
      assert.equal(res.body.error.code, 'invalid_request', param);
      assert.equal(res.body.error.param, param);
      assert.match(res.body.error.message, message);
      assert.deepEqual(await rowCounts(), before, param);
    }
    // The refusals did not use up the key.
    await t
      .as(h.http.post('/v1/jobs'))
      .set('Idempotency-Key', 'k-contradicts')
      .send(from('agrees', ck, { task: { name: 'addition' } }))
      .expect(201);
  });

  test('a spec that leaves sizes out, or sets the ones the checkpoint ran, is accepted', async () => {
    const ck = await withCheckpoint({
      name: 'rev-sized',
      workflow: {
        model: { preset: 'micro', contextLength: 20 },
        task: { name: 'reversal', minLength: 2, maxLength: 8 },
      },
    });
    for (const workflow of [
      { task: { name: 'reversal' } },
      { task: { name: 'reversal', maxLength: 8 }, model: { preset: 'micro' } },
      { task: { name: 'reversal', seed: 1 } },
      {
        task: { name: 'reversal', minLength: 2, maxLength: 8, digits: 5 },
        model: { dModel: 32, layers: 1, heads: 2, contextLength: 20 },
      },
    ])
      await t
        .as(h.http.post('/v1/jobs'))
        .send(from('agrees', ck, workflow))
        .expect(201);
    const res = await t
      .as(h.http.post('/v1/jobs'))
      .send(from('shorter', ck, { task: { name: 'reversal', maxLength: 6 } }))
      .expect(400);
    assert.equal(res.body.error.param, 'workflow.task.maxLength');
    assert.match(res.body.error.message, /ran the reversal task \(minLength 2, maxLength 8\)/);
  });

  test("a checkpoint of a job started from a checkpoint is that checkpoint's model and task", async () => {
    const root = await withCheckpoint({
      name: 'root',
      workflow: { model: { preset: 'small' }, task: { name: 'addition', digits: 3 } },
    });
    // It names no sizes: it runs the root's digits 3 and small model, not the defaults.
    const child = await withCheckpoint(from('child', root, { task: { name: 'addition' } }));
    await t
      .as(h.http.post('/v1/jobs'))
      .send(from('grandchild', child, { task: { name: 'addition', digits: 3 }, model: { preset: 'small' } }))
      .expect(201);
    const res = await t
      .as(h.http.post('/v1/jobs'))
      .send(from('grandchild', child, { task: { name: 'addition', digits: 2 } }))
      .expect(400);
    assert.equal(res.body.error.param, 'workflow.task.digits');
    assert.match(res.body.error.message, /ran the addition task \(digits 3\)/);
  });
});

describe('unknown routes and ids', () => {
  test('an unknown route is a JSON 404', async () => {
    const res = await h.http.get('/v1/nope').expect(404);
    assert.equal(res.body.error.code, 'not_found');
  });
  test('a malformed job id is a 404, not a 500', async () => {
    await t.as(h.http.get('/v1/jobs/not-a-uuid')).expect(404);
    await t.as(h.http.post('/v1/jobs/not-a-uuid/cancel')).expect(404);
  });
  test('every response carries a request id', async () => {
    const res = await h.http.get('/healthz').set('X-Request-Id', 'abc-123').expect(200);
    assert.equal(res.headers['x-request-id'], 'abc-123');
  });
});
