/**
 * Which failures answer 503 `unavailable` (a dependency is down, restarting or unreachable: retry)
 * rather than 500 `internal`: each code and message of the outage family, from `pg`, Prisma's
 * wrapping of it and ioredis, and the errors that must stay 500.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Prisma } from '../../common/db.js';
import { isUnavailable, sendError, toApiError } from '../http/errors.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
const pgError = (code: string, message: string) => {
  const e = new pg.DatabaseError(message, message.length, 'error');
  e.code = code;
  e.severity = 'FATAL';
  return e;
};
const prismaError = (code: string, meta: Record<string, unknown> = {}) =>
  new Prisma.PrismaClientKnownRequestError('Invalid `prisma.tenant.count()` invocation', {
    code,
    clientVersion: '7.10.0',
    meta,
  });

test('socket and name-lookup failures', () => {
  for (const code of [
    'ECONNREFUSED',
    'ECONNRESET',
    'ETIMEDOUT',
    'EPIPE',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'ENOTFOUND',
    'EAI_AGAIN',
  ])
    assert.equal(isUnavailable(withCode(code, `read ${code}`)), true, code);
  // Node's dual-stack connect fails with an AggregateError of each address's error.
  const both = new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect');
  assert.equal(isUnavailable(both), true);
});

test('PostgreSQL: shutdown, crash shutdown, starting up, too many connections, connection exceptions', () => {
  for (const [code, message] of [
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection due to crash of another server process'],
    ['57P03', 'the database system is starting up'],
    ['57P03', 'the database system is shutting down'],
    ['53300', 'sorry, too many clients already'],
    ['08000', 'connection exception'],
    ['08003', 'connection does not exist'],
    ['08006', 'connection failure'],
    ['08P01', 'protocol violation'],
  ] as const)
    assert.equal(isUnavailable(pgError(code, message)), true, `${code} ${message}`);
});

test("pg's errors without a code, by their exact message", () => {
  for (const message of [
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'Client has encountered a connection error and is not queryable',
    'timeout exceeded when trying to connect',
  ])
    assert.equal(isUnavailable(new Error(message)), true, message);
  // pg-pool's timeout keeps the socket's error as its cause.
  const timeout = new Error('Connection terminated due to connection timeout', {
    cause: new Error('Connection terminated unexpectedly'),
  });
  assert.equal(isUnavailable(timeout), true);
});

test("Prisma's wrapping: its own codes, and the driver's code under meta.driverAdapterError", () => {
  for (const code of ['P1001', 'P1002', 'P1008', 'P1017', 'P2037'])
    assert.equal(isUnavailable(prismaError(code)), true, code);
  // What `prisma.$queryRaw` and a model query answer when the backend is terminated or starting up.
  for (const code of ['57P01', '57P03', '08006'])
    for (const wrapper of ['P2010', 'P2039'])
      assert.equal(
        isUnavailable(
          prismaError(wrapper, {
            driverAdapterError: {
              name: 'DriverAdapterError',
              cause: { kind: 'postgres', originalCode: code, code, originalMessage: 'x' },
            },
          }),
        ),
        true,
        `${wrapper} ${code}`,
      );
});

test('ioredis: a command that ran out of retries, one on a closed connection, Redis loading', async () => {
  const refused = new Redis({
    port: 1,
    host: '127.0.0.1',
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  refused.on('error', () => undefined);
  const maxRetries = await refused.get('k').then(
    () => assert.fail('Redis on port 1 answered'),
    (err: unknown) => err,
  );
  refused.disconnect();
  assert.ok(
    (maxRetries as Error).name === 'MaxRetriesPerRequestError' ||
      (maxRetries as Error).message === 'Connection is closed.',
    String(maxRetries),
  );
  assert.equal(isUnavailable(maxRetries), true);

  const closed = new Redis({ lazyConnect: true });
  closed.disconnect();
  const onClosed = await closed.get('k').then(
    () => assert.fail('a closed connection answered'),
    (err: unknown) => err,
  );
  assert.equal((onClosed as Error).message, 'Connection is closed.');
  assert.equal(isUnavailable(onClosed), true);

  class MaxRetriesPerRequestError extends Error {
    override get name() {
      return 'MaxRetriesPerRequestError';
    }
  }
  assert.equal(
    isUnavailable(new MaxRetriesPerRequestError('Reached the max retries per request limit')),
    true,
  );
  const loading = Object.assign(new Error('LOADING Redis is loading the dataset in memory'), {
    name: 'ReplyError',
  });
  assert.equal(isUnavailable(loading), true);
});

test('everything else stays 500 internal', () => {
  for (const err of [
    new Error('boom'),
    new TypeError("Cannot read properties of undefined (reading 'id')"),
    pgError('23505', 'duplicate key value violates unique constraint'),
    pgError('40P01', 'deadlock detected'),
    pgError('57014', 'canceling statement due to statement timeout'),
    pgError('42P01', 'relation "x" does not exist'),
    prismaError('P2002'),
    prismaError('P2025'),
    // The message alone is not enough where the error carries another code.
    withCode('ERR_SOMETHING', 'Connection terminated unexpectedly'),
    Object.assign(new Error('ERR unknown command'), { name: 'ReplyError' }),
    null,
    undefined,
    'a string',
  ])
    assert.equal(isUnavailable(err), false, String((err as Error)?.message ?? err));
  assert.equal(toApiError(new Error('boom')).code, 'internal');
});

test('answered as 503 unavailable with Retry-After', () => {
  const err = toApiError(new Error('Connection terminated unexpectedly'));
  assert.equal(err.code, 'unavailable');
  assert.equal(err.status, 503);
  const headers: Record<string, string> = {};
  let body = '';
  const res = {
    headersSent: false,
    statusCode: 200,
    setHeader: (k: string, v: string | number) => void (headers[k.toLowerCase()] = String(v)),
    end: (b?: string) => void (body = b ?? ''),
  };
  const log = { error: () => undefined };
  sendError(res as never, pgError('57P03', 'the database system is starting up'), log as never, 'req-1');
  assert.equal(res.statusCode, 503);
  assert.equal(headers['retry-after'], '1');
  assert.equal(JSON.parse(body).error.code, 'unavailable');
});
