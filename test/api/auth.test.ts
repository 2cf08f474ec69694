import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import jwt from 'jsonwebtoken';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let acme: TestTenant;

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
});
after(() => h.close());

const sign = (payload: object, opts: jwt.SignOptions, secret = h.config.TIMESHARE_JWT_SECRET) =>
  jwt.sign(payload, secret, { audience: 'timeshare-api', issuer: 'timeshare', subject: acme.id, ...opts });

async function expect401(token: string | null) {
  const req = h.http.get('/v1/jobs');
  const res = await (token === null ? req : req.set('Authorization', `Bearer ${token}`)).expect(401);
  assert.equal(res.body.error.code, 'unauthorized');
  assert.equal(res.body.error.type, 'authentication_error');
}

describe('tenants and keys', () => {
  test('creating a tenant returns its key once; the key is stored hashed', async () => {
    const res = await h.admin(h.http.post('/v1/tenants')).send({ name: 'hashcheck' }).expect(201);
    assert.match(res.body.apiKey, /^tsk_/);
    assert.equal(res.body.apiKeyPrefix, res.body.apiKey.slice(0, 12));
    const rows = await h.api.deps.db.pool.query('SELECT prefix, hash FROM api_keys WHERE tenant_id = $1', [
      res.body.id,
    ]);
    assert.equal(rows.rows.length, 1);
    assert.notEqual(rows.rows[0].hash, res.body.apiKey);
    assert.ok(!JSON.stringify(rows.rows).includes(res.body.apiKey));
    const get = await h.admin(h.http.get(`/v1/tenants/${res.body.id}`)).expect(200);
    assert.equal(get.body.apiKey, undefined);
    assert.equal(get.body.quota.maxActiveJobs, 20);
  });

  test('a duplicate tenant name is 409 naming the field', async () => {
    const res = await h.admin(h.http.post('/v1/tenants')).send({ name: 'acme' }).expect(409);
    assert.equal(res.body.error.param, 'name');
  });

  test('more keys can be created, and a revoked key cannot get a token', async () => {
    const k = await h
      .admin(h.http.post(`/v1/tenants/${acme.id}/keys`))
      .send({ name: 'ci' })
      .expect(201);
    await h.http.post('/v1/auth/token').send({ apiKey: k.body.apiKey }).expect(200);
    await h.admin(h.http.delete(`/v1/tenants/${acme.id}/keys/${k.body.id}`)).expect(204);
    const res = await h.http.post('/v1/auth/token').send({ apiKey: k.body.apiKey }).expect(401);
    assert.equal(res.body.error.code, 'unauthorized');
    await h
      .admin(h.http.delete(`/v1/tenants/${acme.id}/keys/00000000-0000-4000-8000-000000000000`))
      .expect(404);
  });

  test('an unknown key gets 401', async () => {
    await h.http.post('/v1/auth/token').send({ apiKey: 'tsk_nope' }).expect(401);
  });
});

describe('tokens', () => {
  test('the minted token is HS256 with sub, aud, iat and exp', async () => {
    const res = await h.http.post('/v1/auth/token').send({ apiKey: acme.apiKey }).expect(200);
    const decoded = jwt.decode(res.body.token, { complete: true })!;
    assert.equal(decoded.header.alg, 'HS256');
    const p = decoded.payload as jwt.JwtPayload;
    assert.equal(p.sub, acme.id);
    assert.equal(p.aud, 'timeshare-api');
    assert.ok(typeof p.iat === 'number' && typeof p.exp === 'number' && p.exp > p.iat);
    assert.equal(new Date(res.body.expiresAt).getTime(), p.exp * 1000);
    // Who the token acts as, for a dashboard header or `whoami`.
    assert.deepEqual(res.body.tenant, { id: acme.id, name: acme.name });
  });

  test('missing, garbage, expired, wrong-secret, wrong-audience and alg:none tokens are 401', async () => {
    await expect401(null);
    await expect401('not-a-jwt');
    await expect401(sign({ role: 'tenant' }, { algorithm: 'HS256', expiresIn: -10 }));
    await expect401(
      sign({ role: 'tenant' }, { algorithm: 'HS256', expiresIn: 60 }, 'another-secret-that-is-long-enough!!'),
    );
    await expect401(
      sign({ role: 'tenant' }, { algorithm: 'HS256', expiresIn: 60, audience: 'someone-else' }),
    );
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from(
      JSON.stringify({
        sub: acme.id,
        role: 'tenant',
        aud: 'timeshare-api',
        iss: 'timeshare',
        iat: now,
        exp: now + 60,
      }),
    ).toString('base64url');
    await expect401(`${header}.${body}.`);
    await expect401(sign({ role: 'tenant' }, { algorithm: 'HS384', expiresIn: 60 }));
    const res = await h.http.get('/v1/jobs').set('Authorization', 'Basic abc').expect(401);
    assert.equal(res.body.error.code, 'unauthorized');
  });

  test('a token without exp is refused', async () => {
    await expect401(sign({ role: 'tenant' }, { algorithm: 'HS256' }));
  });
});

describe('roles', () => {
  test('a tenant calling admin routes gets 403', async () => {
    for (const [method, path] of [
      ['post', '/v1/tenants'],
      ['get', '/v1/tenants'],
      ['get', `/v1/tenants/${acme.id}/quota`],
      ['put', `/v1/tenants/${acme.id}/quota`],
      ['get', '/v1/pools'],
      ['get', '/v1/nodes'],
      ['post', '/v1/node-keys'],
    ] as const) {
      const res = await acme.as(h.http[method](path)).send({}).expect(403);
      assert.equal(res.body.error.code, 'forbidden', `${method} ${path}`);
    }
  });

  test('a node credential may register and heartbeat but not use tenant routes', async () => {
    const key = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'n1' }).expect(201);
    const tok = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
    assert.equal(tok.body.role, 'node');
    assert.equal(tok.body.tenant, null);
    const asNode = (r: ReturnType<typeof h.http.get>) => r.set('Authorization', `Bearer ${tok.body.token}`);
    await asNode(h.http.get('/v1/jobs')).expect(403);
    const reg = await asNode(h.http.post('/v1/nodes/register'))
      .send({
        name: 'node-a',
        devices: [{ index: 0, kind: 'cpu-virtual', memoryBytes: 1e9, freeMemoryBytes: 1e9, threads: 1 }],
      })
      .expect(200);
    await asNode(h.http.post(`/v1/nodes/${reg.body.id}/heartbeat`))
      .send({ devices: [{ index: 0, freeMemoryBytes: 5e8 }] })
      .expect(204);
    const nodes = await h.admin(h.http.get('/v1/nodes')).expect(200);
    assert.equal(nodes.body.data[0].devices[0].freeMemoryBytes, 5e8);
    const pools = await h.admin(h.http.get('/v1/pools')).expect(200);
    assert.deepEqual(
      pools.body.data.map((p: { name: string; devices: number }) => [p.name, p.devices]),
      [['default', 1]],
    );
    await acme.as(h.http.post('/v1/nodes/register')).send({}).expect(403);
  });

  test('a node key cannot act for a node another key registered', async () => {
    const mint = async (name: string) => {
      const key = await h.admin(h.http.post('/v1/node-keys')).send({ name }).expect(201);
      const tok = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
      return (r: ReturnType<typeof h.http.get>) => r.set('Authorization', `Bearer ${tok.body.token}`);
    };
    const a = await mint('owner');
    const b = await mint('intruder');
    const device = { index: 0, kind: 'cpu-virtual', memoryBytes: 1e9, freeMemoryBytes: 1e9 };
    const node = (
      await a(h.http.post('/v1/nodes/register'))
        .send({ name: 'owned-node', devices: [device] })
        .expect(200)
    ).body;
    await a(h.http.get(`/v1/nodes/${node.id}/assignments`)).expect(200);
    await b(h.http.get(`/v1/nodes/${node.id}/assignments`)).expect(404);
    await b(h.http.post(`/v1/nodes/${node.id}/heartbeat`))
      .send({ devices: [] })
      .expect(404);
    await b(h.http.post(`/v1/nodes/${node.id}/drain`)).expect(404);
    await b(h.http.post(`/v1/nodes/${node.id}/jobs/00000000-0000-4000-8000-000000000000/finish`))
      .send({ outcome: 'succeeded' })
      .expect(404);
    // Nor register it again: the node stays bound to its key (test/api/node-trust.test.ts).
    await b(h.http.post('/v1/nodes/register'))
      .send({ name: 'owned-node', devices: [device] })
      .expect(409);
    await a(h.http.get(`/v1/nodes/${node.id}/assignments`)).expect(200);
  });

  test('a draining node stays draining through heartbeats until it registers again', async () => {
    const key = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'drainer' }).expect(201);
    const tok = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
    const asNode = (r: ReturnType<typeof h.http.get>) => r.set('Authorization', `Bearer ${tok.body.token}`);
    const registration = {
      name: 'drain-node',
      devices: [{ index: 0, kind: 'cpu-virtual', memoryBytes: 1e9, freeMemoryBytes: 1e9 }],
    };
    const node = (await asNode(h.http.post('/v1/nodes/register')).send(registration).expect(200)).body;
    const status = async () =>
      (
        (await h.admin(h.http.get('/v1/nodes')).expect(200)).body.data as { id: string; status: string }[]
      ).find((n) => n.id === node.id)?.status;
    assert.equal(await status(), 'ready');
    await asNode(h.http.post(`/v1/nodes/${node.id}/drain`)).expect(204);
    assert.equal(await status(), 'draining');
    await asNode(h.http.post(`/v1/nodes/${node.id}/heartbeat`))
      .send({ devices: [] })
      .expect(204);
    assert.equal(await status(), 'draining', 'a heartbeat does not undo the drain');
    await asNode(h.http.post('/v1/nodes/register')).send(registration).expect(200);
    assert.equal(await status(), 'ready', 'a restarted daemon is placeable again');
    await acme.as(h.http.post(`/v1/nodes/${node.id}/drain`)).expect(403);
  });

  test('the admin key is not a tenant', async () => {
    await h.admin(h.http.get('/v1/jobs')).expect(403);
  });
});
