import pg from 'pg';

/** What the pools log about lost connections; a Logger fits. */
export interface PoolLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * A `pg` pool whose clients can lose their connection without taking the process down. A `pg`
 * client emits 'error' when its connection dies (the server shut down or restarted, the backend was
 * terminated, the network broke), and an 'error' event nobody listens to throws. pg-pool listens
 * only while a client is idle: it takes its listener off a client it hands out (`pool.connect()`,
 * which transactions, `apply-decisions.ts` and the report path use) until it is released, so a
 * connection lost between two statements of a checked-out client crashed the API and the
 * scheduler (`pg_ctl stop -m fast`: `57P01`, "Connection terminated unexpectedly"). Every client
 * here gets a listener of its own for its whole life; the statement in flight, or the next one,
 * still fails with the error (callers answer 503 or retry), and the pool drops the client when it
 * is released. Every pool of the services is made here.
 */
export function createPool(config: pg.PoolConfig, log?: PoolLog): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('connect', (client) => {
    client.on('error', (err: Error & { code?: string }) => {
      log?.debug({ err: { message: err.message, code: err.code } }, 'database connection lost');
    });
  });
  pool.on('error', (err: Error & { code?: string }) => {
    // An idle client lost its connection; the pool has dropped it and connects anew when needed.
    log?.warn({ err: { message: err.message, code: err.code } }, 'idle database connection lost');
  });
  return pool;
}
