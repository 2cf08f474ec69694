/**
 * A pooled connection that PostgreSQL ends (a shutdown, a restart, `pg_terminate_backend`) must not
 * take the process down. pg-pool takes its own 'error' listener off a client while it is checked
 * out, so a client held across statements (a transaction) whose connection died between two of them
 * emitted an 'error' nobody heard, which throws: the API and the scheduler crashed on
 * `pg_ctl stop -m fast`. Here the statement after the loss fails, and the pool goes on serving.
 * The database is this file's own, and is dropped after it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/database.js';
import { connectDatabase, type Database } from '../db.js';

let tdb: TestDatabase;
let db: Database;
let admin: pg.Client;
const logged: { level: string; msg: string }[] = [];
before(async () => {
  tdb = await createTestDatabase();
  db = connectDatabase(tdb.url, 4, {
    debug: (_o, msg) => logged.push({ level: 'debug', msg }),
    warn: (_o, msg) => logged.push({ level: 'warn', msg }),
  });
  admin = new pg.Client({ connectionString: tdb.url });
  await admin.connect();
});
after(async () => {
  await admin.end();
  await db.close();
  await tdb.drop();
});

/** When the client's connection has ended (`events.once` would reject on the 'error' before it). */
const connectionEnd = (client: pg.PoolClient) => new Promise<void>((r) => client.once('end', () => r()));

async function terminate(client: pg.PoolClient): Promise<void> {
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const ended = connectionEnd(client);
  const r = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
  assert.equal(r.rows[0]!.ok, true);
  await ended;
  // The 'error' event is emitted before 'end'; give an unhandled one its turn to throw.
  await new Promise((r) => setImmediate(r));
}

test('a checked-out client whose backend is terminated between statements', async () => {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await terminate(client);
    // The process is still here; the next statement on the dead client fails, as callers expect.
    await assert.rejects(client.query('SELECT 1'), /not queryable|Connection terminated/);
  } finally {
    client.release();
  }
  assert.ok(logged.some((l) => l.level === 'debug' && l.msg === 'database connection lost'));
  // The pool dropped the dead client and serves the next query, by hand and through Prisma.
  assert.equal((await db.pool.query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n, 1);
  assert.equal(await db.prisma.tenant.count(), 0);
  assert.equal(db.pool.totalCount <= 4, true);
});

test('a checked-out client whose backend is terminated during a statement', async () => {
  const client = await db.pool.connect();
  try {
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const sleeping = client.query('SELECT pg_sleep(30)');
    const failed = assert.rejects(sleeping, (err: Error & { code?: string }) => {
      // Either the server's notice (57P01) or the socket's end, whichever the client saw first.
      assert.ok(err.code === '57P01' || /Connection terminated/.test(err.message), err.message);
      return true;
    });
    const ended = connectionEnd(client);
    await new Promise((r) => setTimeout(r, 100));
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await failed;
    // The server's FATAL notice fails the statement before the socket closes: a client released in
    // between goes back to the pool, and the next statement on it fails too (a 503 or a retry).
    await ended;
    await new Promise((r) => setImmediate(r));
  } finally {
    client.release();
  }
  assert.equal((await db.pool.query<{ n: number }>('SELECT 2 AS n')).rows[0]!.n, 2);
});

test('an idle client whose backend is terminated', async () => {
  const client = await db.pool.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const ended = connectionEnd(client);
  client.release();
  await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  await ended;
  await new Promise((r) => setImmediate(r));
  assert.ok(logged.some((l) => l.level === 'warn' && l.msg === 'idle database connection lost'));
  assert.equal((await db.pool.query<{ n: number }>('SELECT 3 AS n')).rows[0]!.n, 3);
});
