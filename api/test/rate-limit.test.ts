import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Request, Response } from 'express';
import { rateLimit } from '../http/rate-limit.js';
import { ApiError } from '../../common/errors.js';

function call(mw: ReturnType<typeof rateLimit>, principal: Request['principal']) {
  const headers: Record<string, string> = {};
  let error: unknown = undefined;
  mw(
    { principal } as Request,
    { setHeader: (k: string, v: string) => (headers[k] = v) } as unknown as Response,
    (e?: unknown) => {
      error = e;
    },
  );
  return { error, headers };
}

test('a tenant gets a burst of twice the rate, then 429 rate_limited with Retry-After, then refills', () => {
  let clock = 0;
  const mw = rateLimit(5, () => clock);
  const tenant = { role: 'tenant' as const, sub: 't1' };
  for (let i = 0; i < 10; i++) assert.equal(call(mw, tenant).error, undefined, `request ${i}`);
  const limited = call(mw, tenant);
  assert.ok(limited.error instanceof ApiError);
  assert.equal((limited.error as ApiError).code, 'rate_limited');
  assert.equal(limited.headers['Retry-After'], '1');
  assert.equal(call(mw, { role: 'tenant', sub: 't2' }).error, undefined, 'other tenants are unaffected');
  assert.equal(call(mw, { role: 'admin', sub: 'admin' }).error, undefined, 'admin is not limited');
  clock += 1000;
  for (let i = 0; i < 5; i++) assert.equal(call(mw, tenant).error, undefined);
  assert.ok(call(mw, tenant).error instanceof ApiError);
});

test('a rate of 0 disables the limit', () => {
  const mw = rateLimit(0, () => 0);
  for (let i = 0; i < 100; i++) assert.equal(call(mw, { role: 'tenant', sub: 't' }).error, undefined);
});
