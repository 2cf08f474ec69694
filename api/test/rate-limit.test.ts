import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Request, Response } from 'express';
import { createRateLimiter, rateLimit } from '../http/rate-limit.js';
import { ApiError } from '../../common/errors.js';

function call(mw: ReturnType<typeof rateLimit>, principal: Request['principal']) {
  let error: unknown = undefined;
  mw({ principal } as Request, {} as Response, (e?: unknown) => {
    error = e;
  });
  return error;
}

test('a tenant gets a burst of twice the rate, then 429 rate_limited with the wait, then refills', () => {
  let clock = 0;
  const mw = rateLimit(createRateLimiter(5, () => clock));
  const tenant = { role: 'tenant' as const, sub: 't1' };
  for (let i = 0; i < 10; i++) assert.equal(call(mw, tenant), undefined, `request ${i}`);
  const limited = call(mw, tenant);
  assert.ok(limited instanceof ApiError);
  assert.equal(limited.code, 'rate_limited');
  assert.equal(limited.details.retryAfterSeconds, 1);
  assert.equal(call(mw, { role: 'tenant', sub: 't2' }), undefined, 'other tenants are unaffected');
  assert.equal(call(mw, { role: 'admin', sub: 'admin' }), undefined, 'admin is not limited');
  clock += 1000;
  for (let i = 0; i < 5; i++) assert.equal(call(mw, tenant), undefined);
  assert.ok(call(mw, tenant) instanceof ApiError);
});

test('below one request per second the wait is the time to the next whole token', () => {
  let clock = 0;
  const limiter = createRateLimiter(0.25, () => clock);
  const who = { role: 'tenant' as const, sub: 'slow' };
  assert.equal(limiter.take(who), null);
  assert.equal(limiter.take(who), 4, 'the burst (at least one request) is spent: a whole token is 4 s away');
  clock += 2000;
  assert.equal(limiter.take(who), 2);
});

test('a rate of 0 disables the limit', () => {
  const mw = rateLimit(createRateLimiter(0, () => 0));
  for (let i = 0; i < 100; i++) assert.equal(call(mw, { role: 'tenant', sub: 't' }), undefined);
});
