/**
 * An admin cordons and uncordons a node (POST /v1/nodes/{id}/cordon, /uncordon): admin only, 404
 * for a node that does not exist, idempotent, shown by GET /v1/nodes, and left alone by what the
 * node's daemon does (registering again, heartbeats, its own drain). Every answer is the document's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { DocumentOracle } from '../helpers/openapi-doc.js';
import { oneDevice, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let t: TestTenant;
let node: TestNode;
let oracle: DocumentOracle;
const unknown = '00000000-0000-4000-8000-000000000000';

before(async () => {
  h = await startHarness();
  t = await h.createTenant('cordon-tenant');
  node = await registerTestNode(h, 'cordoned-node');
  oracle = new DocumentOracle((await h.http.get('/v1/openapi.json').expect(200)).body);
});
after(() => h.close());

/** Sends the request and checks its answer against the document (status declared, body its schema). */
async function documented(r: import('supertest').Test, path: string, status: number) {
  const res = await r;
  assert.equal(res.status, status, JSON.stringify(res.body));
  const why = oracle.mismatch('post', path, res.status, res.headers['content-type'], res.body);
  assert.equal(why, null, why ?? '');
  return res.body;
}
const CORDON = '/v1/nodes/{id}/cordon';
const UNCORDON = '/v1/nodes/{id}/uncordon';

const listed = async () =>
  (await h.admin(h.http.get('/v1/nodes')).expect(200)).body.data.find(
    (n: { id: string }) => n.id === node.id,
  );

test('admin only: a tenant or a node is refused with 403, an unknown or malformed id is 404', async () => {
  for (const path of [CORDON, UNCORDON]) {
    const url = path.replace('{id}', node.id);
    const tenant = await documented(t.as(h.http.post(url)), path, 403);
    assert.equal(tenant.error.code, 'forbidden');
    await documented(node.as(h.http.post(url)), path, 403);
    await documented(h.http.post(url), path, 401);
    const missing = await documented(h.admin(h.http.post(path.replace('{id}', unknown))), path, 404);
    assert.equal(missing.error.code, 'not_found');
    await documented(h.admin(h.http.post(path.replace('{id}', 'not-a-node'))), path, 404);
  }
  assert.equal((await listed()).cordon, null, 'nothing changed');
});

test('a body it cannot take is a 400 naming the field', async () => {
  const url = CORDON.replace('{id}', node.id);
  for (const [body, param] of [
    [{ evict: 'yes' }, 'evict'],
    [{ reason: '' }, 'reason'],
    [{ reason: 'x'.repeat(501) }, 'reason'],
    [{ why: 'maintenance' }, 'why'],
  ] as const) {
    const res = await documented(h.admin(h.http.post(url)).send(body), CORDON, 400);
    assert.equal(res.error.param, param, JSON.stringify(res.body));
  }
  assert.equal((await listed()).cordon, null);
});

test('cordon is idempotent, keeps its first time, takes a new reason, never drops eviction; uncordon lifts it', async () => {
  const url = CORDON.replace('{id}', node.id);
  // No body at all: a plain cordon.
  const plain = await documented(h.admin(h.http.post(url)), CORDON, 200);
  assert.equal(plain.id, node.id);
  assert.equal(plain.status, 'ready');
  assert.deepEqual({ ...plain.cordon, cordonedAt: 'set' }, { cordonedAt: 'set', reason: null, evict: false });
  const at = plain.cordon.cordonedAt as string;

  const again = await documented(
    h.admin(h.http.post(url)).send({ reason: 'disk replacement', evict: true }),
    CORDON,
    200,
  );
  assert.deepEqual(again.cordon, { cordonedAt: at, reason: 'disk replacement', evict: true });
  const third = await documented(h.admin(h.http.post(url)).send({}), CORDON, 200);
  assert.deepEqual(third.cordon, again.cordon, 'a cordon without a reason or eviction changes nothing');
  assert.deepEqual((await listed()).cordon, again.cordon, 'GET /v1/nodes shows it');

  const off = await documented(h.admin(h.http.post(UNCORDON.replace('{id}', node.id))), UNCORDON, 200);
  assert.equal(off.cordon, null);
  const offAgain = await documented(h.admin(h.http.post(UNCORDON.replace('{id}', node.id))), UNCORDON, 200);
  assert.deepEqual(offAgain, off);
  const row = await h.api.deps.db.pool.query(
    `SELECT cordoned_at, cordon_reason, cordon_evict FROM nodes WHERE id = $1`,
    [node.id],
  );
  assert.deepEqual(row.rows[0], { cordoned_at: null, cordon_reason: null, cordon_evict: false });
});

test("the node's daemon does not lift a cordon: registering again, heartbeats, its own drain", async () => {
  const url = CORDON.replace('{id}', node.id);
  await documented(h.admin(h.http.post(url)).send({ reason: 'bad fan' }), CORDON, 200);
  await node
    .as(h.http.post(`/v1/nodes/${node.id}/heartbeat`))
    .send({ devices: [{ index: 0, freeMemoryBytes: 1e9 }] })
    .expect(204);
  await node
    .as(h.http.post('/v1/nodes/register'))
    .send({ name: 'cordoned-node', devices: oneDevice })
    .expect(200);
  assert.equal((await listed()).cordon?.reason, 'bad fan');
  await node.as(h.http.post(`/v1/nodes/${node.id}/drain`)).expect(204);
  const drained = await listed();
  assert.equal(drained.status, 'draining');
  assert.equal(drained.cordon?.reason, 'bad fan');
  await node
    .as(h.http.post('/v1/nodes/register'))
    .send({ name: 'cordoned-node', devices: oneDevice })
    .expect(200);
  const back = await listed();
  assert.equal(back.status, 'ready', 'its daemon made it ready');
  assert.equal(back.cordon?.reason, 'bad fan', 'and it is still cordoned');
  await h.admin(h.http.post(UNCORDON.replace('{id}', node.id))).expect(200);
});

test("a pool's timeline shows each device's node cordon (since when, why, evicting), as the document says", async () => {
  const TIMELINE = '/v1/pools/{name}/timeline';
  const timeline = async () => {
    const res = await h.admin(h.http.get(TIMELINE.replace('{name}', 'default'))).expect(200);
    const why = oracle.mismatch('get', TIMELINE, res.status, res.headers['content-type'], res.body);
    assert.equal(why, null, why ?? '');
    return (res.body.devices as { node: string; nodeCordon: unknown }[]).filter((d) => d.node === node.id);
  };
  assert.deepEqual(
    (await timeline()).map((d) => d.nodeCordon),
    [null],
  );
  const url = CORDON.replace('{id}', node.id);
  const cordoned = await documented(
    h.admin(h.http.post(url)).send({ reason: 'PSU swap', evict: true }),
    CORDON,
    200,
  );
  assert.deepEqual(
    (await timeline()).map((d) => d.nodeCordon),
    [{ cordonedAt: cordoned.cordon.cordonedAt, reason: 'PSU swap', evict: true }],
    'the same cordon GET /v1/nodes shows',
  );
  await h.admin(h.http.post(UNCORDON.replace('{id}', node.id))).expect(200);
  assert.deepEqual(
    (await timeline()).map((d) => d.nodeCordon),
    [null],
  );
});

test('the document declares both routes, admin only, with the Node answer and the cordon body', async () => {
  const doc = oracle.doc as {
    paths: Record<
      string,
      {
        post?: {
          security?: unknown[];
          responses: Record<string, unknown>;
          requestBody?: { required?: boolean };
        };
      }
    >;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  for (const path of [CORDON, UNCORDON]) {
    const op = doc.paths[path]?.post;
    assert.ok(op, path);
    assert.deepEqual(op.security, [{ bearer: [] }]);
    for (const s of ['200', '400', '401', '403', '404']) assert.ok(op.responses[s], `${path}: ${s}`);
  }
  assert.equal(doc.paths[CORDON]!.post!.requestBody?.required, false, 'the body is optional');
  assert.ok(doc.paths[CORDON]!.post!.responses['413']);
  assert.deepEqual(Object.keys(doc.components.schemas.CordonNode!.properties!).sort(), ['evict', 'reason']);
  assert.ok(doc.components.schemas.Node!.properties!.cordon);
  assert.ok(doc.components.schemas.PoolDevice!.properties!.nodeCordon);
});
