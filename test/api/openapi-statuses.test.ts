/**
 * Every status a route can send is documented for it, derived from the running server: each route
 * is driven into each failure the stack in front of it can produce (no or bad credentials, another
 * role, unknown ids, an undecodable path, bad query and body, a body over the limit, another method,
 * oversized headers, the per-address rate limit) and into the failures its handler raises (409, 416,
 * quota 429). Each answer's status must be declared for the route and its body must fit the schema;
 * and each failure a route's shape implies must actually be reachable, so the probes cannot pass by
 * missing their mark.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type request from 'supertest';
import { issueToken } from '../../api/auth/jwt.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { DocumentOracle, type Operation } from '../helpers/openapi-doc.js';

const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;
type Method = (typeof METHODS)[number];

let oracle: DocumentOracle;
const observed = new Map<string, Set<number>>();
const problems: string[] = [];

async function probe(
  h: Harness,
  op: Pick<Operation, 'method' | 'path'>,
  method: string,
  url: string,
  prep: (r: request.Test) => request.Test = (r) => r,
): Promise<request.Response> {
  const res = await prep(h.http[method as Method](url));
  const key = `${op.method} ${op.path}`;
  if (!observed.has(key)) observed.set(key, new Set());
  observed.get(key)!.add(res.status);
  const why = oracle.mismatch(method, op.path, res.status, res.headers['content-type'], res.body);
  if (why) problems.push(`${method.toUpperCase()} ${url}: ${why}`);
  if (res.status === 405 && !res.headers.allow) problems.push(`${url}: 405 without Allow`);
  return res;
}

// Upper case: a well-formed id of nothing, and a malformed pool name, so every id route can 404.
const fill = (template: string) => template.replace(/\{[^}]+\}/g, () => randomUUID().toUpperCase());

let h: Harness;
let creds: Record<'admin' | 'tenant' | 'node', (r: request.Test) => request.Test>;

before(async () => {
  // The per-address limit is off here: the probes below send hundreds of unauthenticated requests,
  // and on a fast machine they emptied the bucket the next test's token exchanges need (a 429 where
  // a 200 was due). The last test runs its own harness with the limit on.
  h = await startHarness({ TIMESHARE_BODY_LIMIT: '1kb', TIMESHARE_ADDRESS_RATE_LIMIT_PER_SECOND: '0' });
  oracle = new DocumentOracle((await h.http.get('/v1/openapi.json').expect(200)).body);
  const t = await h.createTenant('prober');
  const nodeKey = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'prober' }).expect(201);
  const node = await h.http.post('/v1/auth/token').send({ apiKey: nodeKey.body.apiKey }).expect(200);
  creds = {
    admin: h.admin,
    tenant: t.as,
    node: (r) => r.set('Authorization', `Bearer ${node.body.token}`),
  };
});
after(() => h.close());

test('the stack in front of every route answers only documented statuses, each reachable', async () => {
  for (const op of oracle.operations) {
    const url = fill(op.path);
    const declared = oracle.statusesOf(op.method, op.path);
    const auth = (op.op.security?.length ?? 0) > 0;
    const hasQuery = op.op.parameters?.some((p) => p.in === 'query') ?? false;
    const hasBody = op.op.requestBody !== undefined;
    const all = [(r: request.Test) => r, ...Object.values(creds)];

    await probe(h, op, op.method, url, (r) => r.set('Authorization', 'Bearer not-a-token'));
    for (const as of all) await probe(h, op, op.method, url, as);
    for (const as of all) await probe(h, op, op.method, `${url}?zzz=%00`, as);
    if (op.path.includes('{'))
      for (const as of all) await probe(h, op, op.method, op.path.replace(/\{[^}]+\}/, '%E0%A4%A'), as);
    if (hasBody)
      for (const as of all) {
        await probe(h, op, op.method, url, (r) => as(r).send({}));
        await probe(h, op, op.method, url, (r) => as(r).send({ 'zzz\u0000': 1 }));
        await probe(h, op, op.method, url, (r) => as(r).send({ padding: 'x'.repeat(2048) }));
      }
    const other = METHODS.find((m) => !oracle.doc.paths[op.path]![m])!;
    for (const as of all) await probe(h, op, other, url, as);
    await probe(h, op, op.method, url, (r) => r.set('X-Padding', 'a'.repeat(20_000)));

    const seen = observed.get(`${op.method} ${op.path}`)!;
    const expected = [401, 405, 431];
    if (auth) expected.push(403);
    if (op.path.includes('{')) expected.push(404, 400);
    if (hasQuery || hasBody) expected.push(400);
    if (hasBody) expected.push(413);
    for (const s of expected)
      assert.ok(seen.has(s), `${op.method.toUpperCase()} ${op.path}: ${s} not reached (saw ${[...seen]})`);
    for (const s of seen) assert.ok(declared.includes(String(s)), `${op.method} ${op.path}: ${s}`);
  }
  assert.deepEqual(problems, []);
});

test('the failures handlers raise themselves are documented: 409, 416, quota 429', async () => {
  const t = await h.createTenant('handler-failures', { maxActiveJobs: 1 });
  const op = (method: string, p: string) => ({ method, path: p });
  const spec = { name: 'a', workflow: { task: { name: 'addition' } } };
  const first = await probe(h, op('post', '/v1/jobs'), 'post', '/v1/jobs', (r) =>
    t.as(r).set('Idempotency-Key', 'k').send(spec),
  );
  assert.equal(first.status, 201);
  const conflict = await probe(h, op('post', '/v1/jobs'), 'post', '/v1/jobs', (r) =>
    t
      .as(r)
      .set('Idempotency-Key', 'k')
      .send({ ...spec, name: 'b' }),
  );
  assert.equal(conflict.status, 409);
  const quota = await probe(h, op('post', '/v1/jobs'), 'post', '/v1/jobs', (r) => t.as(r).send(spec));
  assert.equal(quota.status, 429);
  const jobId = first.body.id as string;

  const dup = await probe(h, op('post', '/v1/tenants'), 'post', '/v1/tenants', (r) =>
    h.admin(r).send({ name: 'handler-failures' }),
  );
  assert.equal(dup.status, 409);

  const file = path.join(h.config.TIMESHARE_STORAGE_ROOT, `jobs/${jobId}/ck`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, 'abc');
  const ck = await h.api.deps.db.prisma.checkpoint.create({
    data: { jobId, step: 1, sizeBytes: 3n, sha256: 'ab'.repeat(32), storageKey: `jobs/${jobId}/ck` },
  });
  const content = '/v1/jobs/{id}/checkpoints/{checkpointId}/content';
  const url = `/v1/jobs/${jobId}/checkpoints/${ck.id}/content`;
  assert.equal(
    (await probe(h, op('get', content), 'get', url, (r) => t.as(r).set('Range', 'bytes=0-0'))).status,
    206,
  );
  assert.equal(
    (await probe(h, op('get', content), 'get', url, (r) => t.as(r).set('Range', 'bytes=9-'))).status,
    416,
  );

  await h.api.deps.db.pool.query(`UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = $1`, [
    jobId,
  ]);
  const cancel = await probe(h, op('post', '/v1/jobs/{id}/cancel'), 'post', `/v1/jobs/${jobId}/cancel`, t.as);
  assert.equal(cancel.status, 409);

  // One webhook endpoint past the per-tenant limit (20).
  const hook = { url: 'https://93.184.215.14/hook' }; // public, and no DNS lookup
  let full: request.Response;
  do full = await probe(h, op('post', '/v1/webhooks'), 'post', '/v1/webhooks', (r) => t.as(r).send(hook));
  while (full.status === 201);
  assert.equal(full.status, 409);

  // A node name another node key registered.
  const node = {
    name: 'taken',
    devices: [{ index: 0, kind: 'cpu', memoryBytes: 1, freeMemoryBytes: 1, threads: 1 }],
  };
  const asNode = async (name: string) => {
    const key = await h.admin(h.http.post('/v1/node-keys')).send({ name }).expect(201);
    const token = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
    return (r: request.Test) => r.set('Authorization', `Bearer ${token.body.token}`);
  };
  for (const [who, status] of [
    ['first', 200],
    ['second', 409],
  ] as const) {
    const as = await asNode(who);
    const res = await probe(h, op('post', '/v1/nodes/register'), 'post', '/v1/nodes/register', (r) =>
      as(r).send(node),
    );
    assert.equal(res.status, status, JSON.stringify(res.body));
  }
  assert.deepEqual(problems, []);
});

test('every route answers the per-address rate limit with a documented 429', async () => {
  const limited = await startHarness({
    TIMESHARE_ADDRESS_RATE_LIMIT_PER_SECOND: '0.001',
    TIMESHARE_RATE_LIMIT_PER_SECOND: '0.001',
  });
  try {
    const tenant = issueToken(limited.config.TIMESHARE_JWT_SECRET, 60, {
      role: 'tenant',
      sub: randomUUID(),
      keyId: randomUUID(),
    });
    for (const op of oracle.operations) {
      const url = fill(op.path);
      // The first request without credentials takes the address's one token; every later one is over.
      await probe(limited, op, op.method, url);
      const res = await probe(limited, op, op.method, url);
      assert.equal(res.status, 429, `${op.method.toUpperCase()} ${op.path}`);
      assert.ok(Number(res.headers['retry-after']) >= 1);
      // A tenant past its own rate is refused the same way, where a tenant may call.
      await probe(limited, op, op.method, url, (r) => r.set('Authorization', `Bearer ${tenant.token}`));
    }
    assert.deepEqual(problems, []);
  } finally {
    await limited.close();
  }
});
