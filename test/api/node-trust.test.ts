/**
 * A node is trusted with the jobs placed on it and nothing more: it cannot point a checkpoint
 * record at another job's files, charge a tenant more device time than its placement could use,
 * take over a node another key registered, or reach a 500 with out-of-range numbers or NUL bytes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type request from 'supertest';
import { checkpointModelKey } from '../../common/storage/index.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { sweepLostNodes } from '../../scheduler/liveness.js';
import { apiPresentFor } from '../helpers/api-presence.js';

type As = (r: request.Test) => request.Test;

let h: Harness;
let acme: TestTenant;
let rival: TestTenant;
/** Reports and checkpoint records sent so far: each names the next number (its run's, in order). */
let reported = 0;

const device = { index: 0, kind: 'cpu-virtual', memoryBytes: 1e9, freeMemoryBytes: 1e9 };

async function mintNodeKey(name: string): Promise<As> {
  const key = await h.admin(h.http.post('/v1/node-keys')).send({ name }).expect(201);
  const tok = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
  return (r) => r.set('Authorization', `Bearer ${tok.body.token}`);
}

async function submit(t: TestTenant, name: string): Promise<string> {
  const res = await t
    .as(h.http.post('/v1/jobs'))
    .send({ name, resources: { devices: 2 }, workflow: { task: { name: 'addition' } } })
    .expect(201);
  return res.body.id as string;
}

/**
 * What the scheduler leader does when it places a job (no scheduler runs here, so this test holds
 * the leader's lease itself): the row names the node, the devices held and when it was placed.
 */
async function placeAndStart(as: As, nodeId: string, jobId: string): Promise<void> {
  const pool = h.api.deps.db.pool;
  await pool.query(
    `INSERT INTO scheduler_leases (name, holder, epoch, expires_at)
     VALUES ('scheduler', 'node-trust-test', 1, now() + interval '1 hour') ON CONFLICT (name) DO NOTHING`,
  );
  await pool.query(
    `UPDATE jobs SET status = 'placed', node_id = $2, sched_epoch = 1, placed_at = now(),
       placement = jsonb_build_object('devices', jsonb_build_array(0, 1)) WHERE id = $1`,
    [jobId, nodeId],
  );
  const started = await as(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/start`))
    .send({ queueSeq: 0 })
    .expect(200);
  assert.equal(started.body.applied, true);
}

/** A checkpoint file as a worker leaves it in local storage. */
async function writeModel(jobId: string, step: number, bytes: Buffer) {
  const file = path.join(h.config.TIMESHARE_STORAGE_ROOT, checkpointModelKey(jobId, step));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, bytes);
  return {
    queueSeq: 0,
    reportSeq: ++reported,
    step,
    sizeBytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
  rival = await h.createTenant('rival');
});
after(() => h.close());

describe('checkpoint reports', () => {
  let node: As;
  let nodeId: string;
  let acmeJob: string;
  let rivalJob: string;
  before(async () => {
    node = await mintNodeKey('ckpt-node');
    nodeId = (await node(h.http.post('/v1/nodes/register')).send({ name: 'ckpt-node', devices: [device] }))
      .body.id;
    acmeJob = await submit(acme, 'acme-run');
    rivalJob = await submit(rival, 'rival-run');
    await placeAndStart(node, nodeId, acmeJob);
  });

  test("a node cannot point a job's checkpoint at another tenant's files", async () => {
    // The rival's model sits in storage where its own job wrote it.
    const secret = Buffer.from('rival tenant weights');
    await writeModel(rivalJob, 20, secret);
    const report = {
      queueSeq: 0,
      reportSeq: ++reported,
      step: 20,
      sizeBytes: secret.length,
      sha256: createHash('sha256').update(secret).digest('hex'),
      storageKey: checkpointModelKey(rivalJob, 20),
    };
    const refused = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${acmeJob}/checkpoints`))
      .send(report)
      .expect(400);
    assert.equal(refused.body.error.code, 'invalid_request');
    assert.equal(refused.body.error.param, 'storageKey');
    const listed = await acme.as(h.http.get(`/v1/jobs/${acmeJob}/checkpoints`)).expect(200);
    assert.deepEqual(listed.body.data, [], 'nothing was recorded');
  });

  test('the recorded key is derived from the job and the step', async () => {
    const own = Buffer.from('acme weights, step 10');
    const report = await writeModel(acmeJob, 10, own);
    const res = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${acmeJob}/checkpoints`))
      .send(report)
      .expect(200);
    assert.equal(res.body.applied, true);
    const row = await h.api.deps.db.pool.query(`SELECT storage_key FROM checkpoints WHERE id = $1`, [
      res.body.checkpointId,
    ]);
    assert.equal(row.rows[0].storage_key, checkpointModelKey(acmeJob, 10));
    const got = await acme
      .as(h.http.get(`/v1/jobs/${acmeJob}/checkpoints/${res.body.checkpointId}/content`))
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      })
      .expect(200);
    assert.ok((got.body as Buffer).equals(own));
  });

  test('checkpoint meta is bounded and NUL-free', async () => {
    // With the key a worker sends, so that only the meta can be what is refused.
    const base = {
      ...(await writeModel(acmeJob, 30, Buffer.from('x'))),
      storageKey: checkpointModelKey(acmeJob, 30),
    };
    for (const meta of [
      { note: 'a\u0000b' },
      { ['k\u0000']: 1 },
      { task: { name: '\u0000' } },
      { deep: { a: { b: 1 } } },
    ]) {
      const res = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${acmeJob}/checkpoints`))
        .send({ ...base, meta })
        .expect(400);
      assert.equal(res.body.error.code, 'invalid_request', JSON.stringify(meta));
    }
  });
});

describe('usage reports', () => {
  test('a node cannot charge more device-seconds than wall time × devices held', async () => {
    const node = await mintNodeKey('usage-node');
    const nodeId = (
      await node(h.http.post('/v1/nodes/register')).send({ name: 'usage-node', devices: [device] })
    ).body.id;
    const jobId = await submit(acme, 'usage-run');
    await placeAndStart(node, nodeId, jobId);
    const before = Date.now();
    for (let i = 0; i < 3; i++)
      await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/report`))
        .send({ queueSeq: 0, reportSeq: ++reported, deviceSeconds: 1e6 })
        .expect(200);
    const elapsed = (Date.now() - before) / 1000 + 5;
    const job = await h.api.deps.db.pool.query(`SELECT device_seconds FROM jobs WHERE id = $1`, [jobId]);
    const charged = Number(job.rows[0].device_seconds);
    assert.ok(charged < 2 * elapsed, `charged ${charged} device-seconds in about ${elapsed} s on 2 devices`);
    const usage = await acme.as(h.http.get('/v1/usage')).expect(200);
    assert.ok(usage.body.deviceSecondsUsed < 2 * elapsed);
    const ledger = await h.api.deps.db.pool.query(
      `SELECT sum(device_seconds) AS s FROM usage_ledger WHERE job_id = $1`,
      [jobId],
    );
    assert.equal(Number(ledger.rows[0].s), charged, 'the ledger agrees with the job');
  });
});

describe('node identity', () => {
  test('another key cannot take over a registered node until an admin releases it', async () => {
    const owner = await mintNodeKey('owner');
    const intruder = await mintNodeKey('intruder');
    const reg = { name: 'bound-node', devices: [device] };
    const nodeId = (await owner(h.http.post('/v1/nodes/register')).send(reg).expect(200)).body.id;
    const jobId = await submit(acme, 'bound-run');
    await placeAndStart(owner, nodeId, jobId);

    const taken = await intruder(h.http.post('/v1/nodes/register')).send(reg).expect(409);
    assert.equal(taken.body.error.code, 'conflict');
    await owner(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(200);
    const job = await acme.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200);
    assert.equal(job.body.status, 'running', 'the refused registration requeued nothing');
    await owner(h.http.post('/v1/nodes/register')).send(reg).expect(200);
    // Registering again (a restarted daemon: its job processes died with it) requeued that run.
    assert.equal((await acme.as(h.http.get(`/v1/jobs/${jobId}`))).body.status, 'queued');
    const held = await submit(acme, 'held-run');
    await placeAndStart(owner, nodeId, held);

    await acme.as(h.http.post(`/v1/nodes/${nodeId}/release`)).expect(403);
    const released = await h.admin(h.http.post(`/v1/nodes/${nodeId}/release`)).expect(200);
    assert.deepEqual(released.body, { id: nodeId, name: 'bound-node', released: true });
    await owner(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(404);
    // The owner's daemon may still be running the job: it stays the node's, and no key registers
    // the node, until the node has been silent for the node timeout (its job process stops itself
    // by then). Requeued at once, it ran beside its requeued self for seconds (a QA pass saw 7.5 s).
    await apiPresentFor(h.api.deps.db.pool, 120_000);
    const sweep = () => sweepLostNodes({ ...h.api.deps, pool: h.api.deps.db.pool, timeoutMs: 60_000 });
    assert.equal(await sweep(), 0, 'fenced: heartbeats stopped less than the timeout ago');
    assert.equal((await acme.as(h.http.get(`/v1/jobs/${held}`))).body.status, 'running');
    const fenced = await intruder(h.http.post('/v1/nodes/register')).send(reg).expect(409);
    assert.equal(fenced.body.error.code, 'conflict');
    assert.match(fenced.body.error.message, /was released and still holds its old key's runs/);
    assert.equal(fenced.headers['retry-after'], '1');
    await h.api.deps.db.pool.query(
      `UPDATE nodes SET last_heartbeat_at = now() - interval '61 seconds' WHERE id = $1`,
      [nodeId],
    );
    assert.equal(await sweep(), 1);
    assert.equal((await acme.as(h.http.get(`/v1/jobs/${held}`))).body.status, 'queued');
    const moved = await intruder(h.http.post('/v1/nodes/register')).send(reg).expect(200);
    assert.equal(moved.body.id, nodeId);
    await intruder(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(200);
    await owner(h.http.post('/v1/nodes/register')).send(reg).expect(409);
    await h.admin(h.http.post('/v1/nodes/00000000-0000-4000-8000-000000000000/release')).expect(404);
  });
});

describe('node key revocation', () => {
  const mint = async (name: string) => {
    const key = await h.admin(h.http.post('/v1/node-keys')).send({ name }).expect(201);
    return key.body as { id: string; prefix: string; apiKey: string };
  };
  const token = (apiKey: string) => h.http.post('/v1/auth/token').send({ apiKey });
  const bearer =
    (t: string): As =>
    (r) =>
      r.set('Authorization', `Bearer ${t}`);

  test('a revoked node key mints no token; its node stays bound to it until an admin releases it', async () => {
    const key = await mint('leaked');
    const as = bearer((await token(key.apiKey).expect(200)).body.token);
    const reg = { name: 'leaky-node', devices: [device] };
    const nodeId = (await as(h.http.post('/v1/nodes/register')).send(reg).expect(200)).body.id;

    await h.admin(h.http.delete(`/v1/node-keys/${key.id}`)).expect(204);
    const refused = await token(key.apiKey).expect(401);
    assert.equal(refused.body.error.code, 'unauthorized');
    await h.admin(h.http.delete(`/v1/node-keys/${key.id}`)).expect(204); // again: a no-op
    await token(key.apiKey).expect(401);

    // The listing shows it revoked, by id and prefix, never the secret.
    const listed = (await h.admin(h.http.get('/v1/node-keys?limit=100')).expect(200)).body;
    const row = listed.data.find((k: { id: string }) => k.id === key.id);
    assert.equal(row.prefix, key.prefix);
    assert.equal(row.name, 'leaked');
    assert.ok(row.revokedAt);
    assert.ok('lastUsedAt' in row);
    assert.ok(!JSON.stringify(listed).includes(key.apiKey));

    // A token minted before still works until it expires (TIMESHARE_JWT_TTL_SECONDS), and still
    // only for its own node; releasing the node cuts it off and lets a new key register it.
    await as(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(200);
    const replacement = await mint('replacement');
    const as2 = bearer((await token(replacement.apiKey).expect(200)).body.token);
    await as2(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(404);
    await as2(h.http.post('/v1/nodes/register')).send(reg).expect(409);
    await h.admin(h.http.post(`/v1/nodes/${nodeId}/release`)).expect(200);
    await as(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(404);
    assert.equal((await as2(h.http.post('/v1/nodes/register')).send(reg).expect(200)).body.id, nodeId);
    await as2(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(200);
  });

  test('only the admin revokes node keys, and only node keys', async () => {
    const key = await mint('guarded');
    const as = bearer((await token(key.apiKey).expect(200)).body.token);
    const url = `/v1/node-keys/${key.id}`;
    assert.equal((await as(h.http.delete(url)).expect(403)).body.error.code, 'forbidden');
    assert.equal((await acme.as(h.http.delete(url)).expect(403)).body.error.code, 'forbidden');
    assert.equal((await h.http.delete(url).expect(401)).body.error.code, 'unauthorized');
    await as(h.http.get('/v1/node-keys')).expect(403);
    await acme.as(h.http.get('/v1/node-keys')).expect(403);
    await token(key.apiKey).expect(200); // none of those revoked it

    const unknown = await h
      .admin(h.http.delete('/v1/node-keys/00000000-0000-4000-8000-000000000000'))
      .expect(404);
    assert.equal(unknown.body.error.code, 'not_found');
    await h.admin(h.http.delete('/v1/node-keys/not-a-uuid')).expect(404);
    // A tenant's key is not a node key: 404, and it keeps working.
    const tenantKey = await h
      .admin(h.http.post(`/v1/tenants/${acme.id}/keys`))
      .send({})
      .expect(201);
    await h.admin(h.http.delete(`/v1/node-keys/${tenantKey.body.id}`)).expect(404);
    await token(tenantKey.body.apiKey).expect(200);
  });

  test('the node-key list pages in creation order', async () => {
    const all: string[] = [];
    let after: string | null = null;
    do {
      const q: string = after ? `&after=${encodeURIComponent(after)}` : '';
      const res = await h.admin(h.http.get(`/v1/node-keys?limit=2${q}`)).expect(200);
      assert.ok(res.body.data.length <= 2);
      all.push(...res.body.data.map((k: { id: string }) => k.id));
      after = res.body.nextCursor;
    } while (after);
    const rows = await h.api.deps.db.pool.query(
      `SELECT id FROM api_keys WHERE role = 'node' ORDER BY created_at, id`,
    );
    assert.deepEqual(
      all,
      rows.rows.map((r: { id: string }) => r.id),
    );
    assert.ok(all.length >= 3);
  });
});

describe('bounds and NUL bytes', () => {
  let node: As;
  let nodeId: string;
  let jobId: string;
  before(async () => {
    node = await mintNodeKey('bounds-node');
    nodeId = (await node(h.http.post('/v1/nodes/register')).send({ name: 'bounds-node', devices: [device] }))
      .body.id;
    jobId = await submit(acme, 'bounds-run');
    await placeAndStart(node, nodeId, jobId);
  });

  const INT4_OVER = 2 ** 31;
  const profile = { stage: 'train', seconds: 1 };
  const sha256 = 'a'.repeat(64);

  test('every out-of-range number and every NUL is a 400 invalid_request', async () => {
    const cases: [string, string, object][] = [
      ['report', 'metrics.0.step', { metrics: [{ step: INT4_OVER, name: 'loss', value: 1 }] }],
      ['report', 'metrics.0.name', { metrics: [{ step: 1, name: 'lo\u0000ss', value: 1 }] }],
      ['report', 'profiles.0.stage', { profiles: [{ ...profile, stage: 'tr\u0000ain' }] }],
      ['report', 'profiles.0.step', { profiles: [{ ...profile, step: INT4_OVER }] }],
      ['report', 'profiles.0.tokens', { profiles: [{ ...profile, tokens: INT4_OVER }] }],
      ['report', 'profiles.0.batch', { profiles: [{ ...profile, batch: INT4_OVER }] }],
      ['report', 'profiles.0.devices', { profiles: [{ ...profile, devices: INT4_OVER }] }],
      ['report', 'profiles.0.peakBytes', { profiles: [{ ...profile, peakBytes: 2 ** 64 }] }],
      ['report', 'profiles.0.seconds', { profiles: [{ ...profile, seconds: 1e300 }] }],
      ['report', 'deviceSeconds', { deviceSeconds: 1e300 }],
      ['checkpoints', 'step', { step: INT4_OVER, sizeBytes: 1, sha256 }],
      ['checkpoints', 'sizeBytes', { step: 1, sizeBytes: 2 ** 64, sha256 }],
      ['finish', 'error', { outcome: 'failed', error: 'boom\u0000' }],
      ['start', 'resumedFromStep', { resumedFromStep: INT4_OVER }],
      ['start', 'queueSeq', { queueSeq: INT4_OVER }],
      ['start', 'queueSeq', { queueSeq: -1 }],
    ];
    for (const [route, param, body] of cases) {
      const res = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/${route}`)).send({
        queueSeq: 0,
        ...(route === 'report' || route === 'checkpoints' ? { reportSeq: 1 } : {}),
        ...body,
      });
      assert.equal(res.status, 400, `${route} ${param}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'invalid_request');
      assert.equal(res.body.error.param, param);
    }
    const reg = (over: object) => ({ name: 'bounds-node', devices: [device], ...over });
    const regCases: [string, object][] = [
      ['name', reg({ name: 'n\u0000' })],
      ['deviceType', reg({ deviceType: 'cpu\u0000' })],
      ['labels.zone', reg({ labels: { zone: 'a\u0000' } })],
      ['labels.z\u0000', reg({ labels: { 'z\u0000': 'a' } })],
      ['devices.0.kind', reg({ devices: [{ ...device, kind: 'g\u0000' }] })],
      ['devices.0.memoryBytes', reg({ devices: [{ ...device, memoryBytes: 2 ** 64 }] })],
    ];
    for (const [param, body] of regCases) {
      const res = await node(h.http.post('/v1/nodes/register')).send(body);
      assert.equal(res.status, 400, `register ${param}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'invalid_request');
    }
    const hb = await node(h.http.post(`/v1/nodes/${nodeId}/heartbeat`)).send({
      devices: [{ index: 0, freeMemoryBytes: 2 ** 64 }],
    });
    assert.equal(hb.status, 400);
  });

  test('the largest values that fit are accepted', async () => {
    const res = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/report`))
      .send({
        queueSeq: 0,
        reportSeq: ++reported,
        metrics: [{ step: INT4_OVER - 1, name: 'loss', value: 1 }],
        profiles: [
          { ...profile, step: INT4_OVER - 1, tokens: INT4_OVER - 1, peakBytes: Number.MAX_SAFE_INTEGER },
        ],
      })
      .expect(200);
    assert.equal(res.body.applied, true);
  });
});
