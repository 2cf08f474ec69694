/**
 * A connection made by connectRedis while Redis is away (a TCP proxy of this file's own is taken
 * down; the shared server is never touched): ioredis prints "[ioredis] Unhandled error event" and a
 * stack for each failed reconnection attempt of a connection with no 'error' listener, in every
 * process. Here nothing is printed, the outage is logged once at warn (and once when Redis is back),
 * and a second outage is logged again.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startOutageProxy, type OutageProxy } from '../../test/helpers/outage-proxy.js';
import { testRedisUrl } from '../../test/helpers/redis.js';
import { connectRedis, type Redis } from '../redis.js';

let proxy: OutageProxy;
let redis: Redis | undefined;
const logged: string[] = [];
const printed: string[] = [];
const consoleError = console.error;

before(async () => {
  proxy = await startOutageProxy(testRedisUrl());
  // ioredis prints an unheard 'error' with console.error.
  console.error = (...args: unknown[]) => void printed.push(args.map(String).join(' '));
});
after(async () => {
  console.error = consoleError;
  redis?.disconnect();
  await proxy.close();
});

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('an outage is logged once at warn, and nothing printed for each reconnection attempt', async () => {
  redis = connectRedis(proxy.url, { log: { warn: (_o, msg) => logged.push(msg) }, name: 'test' });
  // Attempts counted without an 'error' listener of the test's own (that would hide the print).
  let errors = 0;
  redis.on('reconnecting', () => errors++);
  await until('ready', () => redis!.status === 'ready');
  assert.equal(logged.length, 0, 'nothing logged while Redis is up');

  for (const outage of [1, 2]) {
    const before = errors;
    proxy.down();
    // Several failed attempts (ioredis waits 50 ms more before each).
    await until('reconnection attempts', () => errors - before >= 4);
    await assert.rejects(redis.ping(), 'a command still fails where it is made');
    proxy.up();
    await until('ready again', () => redis!.status === 'ready');
    assert.equal(await redis.ping(), 'PONG');
    assert.deepEqual(
      logged.map((m) => m.replace(/;.*/, '')),
      Array.from({ length: outage }, () => [
        'Redis connection failing',
        'Redis connection ready again',
      ]).flat(),
      `outage ${outage}`,
    );
  }
  assert.deepEqual(
    printed.filter((p) => p.includes('[ioredis]')),
    [],
    'nothing printed',
  );
});
