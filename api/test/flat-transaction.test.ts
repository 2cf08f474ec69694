import { test } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { flatTransaction, NotFlat } from '../nodes/flat-transaction.js';

/** A client that records what reaches the database. */
function recording() {
  const sent: string[] = [];
  const client = {
    query: async (text: string) => {
      sent.push(text);
      return { rows: [], rowCount: 0 };
    },
  } as unknown as pg.PoolClient;
  return { client, sent };
}

test("an apply function's own transaction joins the batch's: BEGIN and COMMIT never reach the database", async () => {
  const { client, sent } = recording();
  const pool = flatTransaction(client);
  const c = await pool.connect();
  await c.query('BEGIN');
  await c.query('SELECT 1 FROM jobs FOR UPDATE');
  await c.query('UPDATE jobs SET x = 1');
  await c.query('COMMIT');
  c.release();
  await pool.query('WITH j AS (UPDATE jobs SET y = 2) SELECT 1');
  assert.deepEqual(sent, [
    'SELECT 1 FROM jobs FOR UPDATE',
    'UPDATE jobs SET x = 1',
    'WITH j AS (UPDATE jobs SET y = 2) SELECT 1',
  ]);
});

test('a rollback after reads only is nothing to undo; after a write it cannot be flat', async () => {
  const { client } = recording();
  const pool = flatTransaction(client);
  const c = await pool.connect();
  await c.query('BEGIN');
  await c.query('SELECT 1');
  await c.query('ROLLBACK');
  await c.query('BEGIN');
  await c.query('INSERT INTO metrics VALUES (1)');
  await assert.rejects(c.query('ROLLBACK'), NotFlat);
  c.release();
});

test('other transaction statements and a second client are refused, not run', async () => {
  const { client, sent } = recording();
  const pool = flatTransaction(client);
  await assert.rejects(pool.query('SAVEPOINT a'), NotFlat);
  await assert.rejects(pool.query('BEGIN ISOLATION LEVEL SERIALIZABLE'), NotFlat);
  await pool.connect();
  await assert.rejects(pool.connect(), NotFlat);
  assert.deepEqual(sent, []);
});
