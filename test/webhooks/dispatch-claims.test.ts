/**
 * The dispatcher's pool in process, against real PostgreSQL and a receiver on 127.0.0.1: its
 * concurrency caps, two dispatchers sharing one outbox without sending an attempt twice, and a
 * late outcome that does not overwrite a newer claim of its row.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { createLogger } from '../../common/logger.js';
import { concurrencyCaps, Dispatcher, type DispatchOptions } from '../../webhooks/dispatch.js';
import { addDeliveries, addEndpoint, startReceiver, waitFor, type Receiver } from './receivers.js';

let h: Harness;
let rx: Receiver;
const pools: pg.Pool[] = [];
const logger = createLogger('webhooks', 'silent');

before(async () => {
  h = await startHarness();
  rx = await startReceiver();
});
after(async () => {
  for (const p of pools) await p.end();
  await rx.close();
  await h.close();
});

function newPool(): pg.Pool {
  const p = new pg.Pool({ connectionString: h.db.url, max: 4 });
  pools.push(p);
  return p;
}

const options = (over: Partial<DispatchOptions> = {}): DispatchOptions => ({
  concurrency: 16,
  timeoutMs: 8_000,
  retryBaseMs: 200,
  retryMaxMs: 1_000,
  allowPrivate: true,
  ...over,
});

const rows = async (ids: string[]) =>
  (
    await h.api.deps.db.pool.query(
      `SELECT attempts, status, last_status_code FROM webhook_deliveries WHERE 'msg_' || id = ANY ($1)`,
      [ids],
    )
  ).rows as { attempts: number; status: string; last_status_code: number | null }[];

test('caps: half the pool per tenant, a quarter per endpoint, at least one, never above the pool', () => {
  assert.deepEqual(concurrencyCaps(options()), { perTenant: 8, perEndpoint: 4 });
  assert.deepEqual(concurrencyCaps(options({ concurrency: 1 })), { perTenant: 1, perEndpoint: 1 });
  assert.deepEqual(concurrencyCaps(options({ concurrency: 3 })), { perTenant: 2, perEndpoint: 1 });
  assert.deepEqual(concurrencyCaps(options({ perTenant: 99, perEndpoint: 99 })), {
    perTenant: 16,
    perEndpoint: 16,
  });
});

test('a claim shares the free slots round-robin between tenants, within the caps', async () => {
  const db = h.api.deps.db.pool;
  const big = await h.createTenant();
  const small = await h.createTenant();
  // The big tenant's 50 rows are all older than the small tenant's one.
  const bigIds = await addDeliveries(db, await addEndpoint(db, rx, big.id, '/rr/big', 'hang'), 50, 60);
  const [smallId] = await addDeliveries(db, await addEndpoint(db, rx, small.id, '/rr/small', 'hang'), 1, 1);
  const d = new Dispatcher(newPool(), options({ concurrency: 4, perEndpoint: 2, perTenant: 2 }), logger);
  await d.pump();
  assert.equal(d.active, 3, 'the big tenant at its cap of 2, the small one with its 1');
  await waitFor('three requests', () => rx.hits.filter((x) => x.path.startsWith('/rr/')).length === 3);
  assert.ok(rx.hits.some((x) => x.id === smallId));
  assert.equal(rx.hits.filter((x) => bigIds.includes(x.id)).length, 2);
  await d.close(0);
  assert.deepEqual(
    (await rows([...bigIds, smallId!])).filter((r) => r.attempts !== 0),
    [],
    'abandoned sends are not counted as attempts',
  );
  await db.query('DELETE FROM webhook_deliveries');
});

test('two dispatchers share due deliveries: each message sent once, never twice at the same time', async () => {
  const db = h.api.deps.db.pool;
  const t1 = await h.createTenant();
  const t2 = await h.createTenant();
  const ids = [
    ...(await addDeliveries(
      db,
      await addEndpoint(db, rx, t1.id, '/pair/1', { status: 204, delayMs: 30 }),
      40,
      1,
    )),
    ...(await addDeliveries(
      db,
      await addEndpoint(db, rx, t2.id, '/pair/2', { status: 204, delayMs: 30 }),
      40,
      1,
    )),
  ];
  const a = new Dispatcher(newPool(), options({ concurrency: 8 }), logger);
  const b = new Dispatcher(newPool(), options({ concurrency: 8 }), logger);
  while ((await rows(ids)).some((r) => r.status !== 'succeeded')) {
    await Promise.all([a.pump(), b.pump()]);
    await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.all([a.idle(), b.idle()]);
  const sent = rx.hits.filter((x) => ids.includes(x.id));
  assert.equal(sent.length, ids.length, 'each message once');
  assert.equal(new Set(sent.map((x) => x.id)).size, ids.length);
  assert.ok((await rows(ids)).every((r) => r.attempts === 1));
  await Promise.all([a.close(0), b.close(0)]);
});

test("a late outcome is not written over a newer claim of the row (a replay or another dispatcher's)", async () => {
  const db = h.api.deps.db.pool;
  const t = await h.createTenant();
  const [id] = await addDeliveries(
    db,
    await addEndpoint(db, rx, t.id, '/late', { status: 500, delayMs: 500 }),
    1,
    1,
  );
  const d = new Dispatcher(newPool(), options(), logger);
  await d.pump();
  assert.equal(d.active, 1);
  await waitFor('the request', () => rx.hits.some((x) => x.id === id));
  // Meanwhile the row is claimed anew (as after an expired lease): it is no longer this send's.
  await db.query(
    `UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE 'msg_' || id = $1`,
    [id],
  );
  await d.idle();
  assert.deepEqual(await rows([id!]), [{ attempts: 0, status: 'pending', last_status_code: null }]);
  await d.close(0);
});
