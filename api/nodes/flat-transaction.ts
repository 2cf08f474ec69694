/**
 * One transaction for a batch of node report records. The apply functions of common/jobs take a
 * pool and open transactions of their own (BEGIN … COMMIT on a client they check out); handed the
 * pool this makes, those become part of the batch's one transaction, which commits once (a commit,
 * one WAL flush, was ~1.6 ms of a ~4.5 ms report here). No savepoints: a savepoint per record
 * doubled the statements a record costs and, past 64 in a transaction, overflows PostgreSQL's
 * subtransaction cache, which slows every other session's snapshots while the batch is open. So a
 * record that fails anywhere fails the transaction, and the batch runs again without it
 * (report-batch.ts); records fail rarely (their bodies were validated before).
 *
 * An inner ROLLBACK that ends an inner transaction without an error (a resend already applied, a
 * job not on this node) is taken as a no-op when the inner transaction only read and locked (what
 * the apply functions do on that path); after a write it throws `NotFlat`, and the caller applies
 * the batch record by record instead. So do other transaction statements and a second client.
 */
import type pg from 'pg';

/** The batch cannot be applied as one flat transaction: apply it another way. */
export class NotFlat extends Error {
  override readonly name = 'NotFlat';
}

const CONTROL = /^\s*(BEGIN|START|COMMIT|END|ROLLBACK|ABORT|SAVEPOINT|RELEASE|PREPARE|SET\s+TRANSACTION)\b/i;
const READ = /^\s*SELECT\b/i;

const textOf = (q: unknown) => (typeof q === 'string' ? q : ((q as { text?: string }).text ?? ''));

/** What the apply functions take as their pool, running on `client`, inside the caller's transaction. */
export function flatTransaction(client: pg.PoolClient): pg.Pool {
  let out = false;
  let inner = false;
  let wrote = false;
  const run = async (q: unknown, values?: unknown) => {
    const text = textOf(q);
    if (CONTROL.test(text)) throw new NotFlat(`${text.trim().split(/\s+/)[0]} inside a batch`);
    if (!READ.test(text)) wrote = true;
    return client.query(q as string, values as unknown[]);
  };
  const checkedOut = {
    query: async (q: unknown, values?: unknown) => {
      switch (textOf(q).trim().toUpperCase()) {
        case 'BEGIN':
          if (inner) throw new NotFlat('a transaction inside a transaction');
          inner = true;
          wrote = false;
          return { rows: [], rowCount: null };
        case 'COMMIT':
          inner = false;
          return { rows: [], rowCount: null };
        case 'ROLLBACK':
          inner = false;
          if (wrote) throw new NotFlat('a rollback after a write');
          return { rows: [], rowCount: null };
        default:
          return run(q, values);
      }
    },
    release: () => {
      out = false;
      inner = false;
    },
  };
  const pool = {
    query: run,
    connect: async () => {
      if (out) throw new NotFlat('a second client');
      out = true;
      return checkedOut;
    },
  };
  // The apply functions use only the pool's `query` and `connect`, and the client's `query` and `release`.
  return pool as unknown as pg.Pool;
}
