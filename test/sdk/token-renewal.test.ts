/**
 * When a token is renewed (sdk/src/token-renewal.ts): a minute before its expiry, or a third of its
 * lifetime when that is shorter. Renewing a minute early, a 30-second token
 * (`TIMESHARE_JWT_TTL_SECONDS=30`, the least allowed) was renewed before every request: an idle
 * worker exchanged its key 42–53 times a minute, as did the CLI and the dashboard.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { issueToken } from '../../api/auth/jwt.js';
import {
  issuedAtOf,
  renewalDue,
  renewalTime,
  renewBeforeMs,
  RENEW_BEFORE_MAX_MS,
} from '../../sdk/src/token-renewal.js';

const secret = randomBytes(32).toString('hex');
const tokenFor = (ttlSeconds: number) =>
  issueToken(secret, ttlSeconds, { role: 'tenant', sub: 'tenant-id', keyId: 'key-id' });

test('a minute before expiry, or a third of the lifetime when that is shorter', () => {
  assert.equal(RENEW_BEFORE_MAX_MS, 60_000);
  assert.equal(renewBeforeMs(3_600_000), 60_000);
  assert.equal(renewBeforeMs(180_000), 60_000);
  assert.equal(renewBeforeMs(90_000), 30_000);
  assert.equal(renewBeforeMs(30_000), 10_000);
  // A lifetime that cannot be told gets the full minute.
  assert.equal(renewBeforeMs(NaN), 60_000);
  assert.equal(renewBeforeMs(-5), 60_000);
});

test("a token's lifetime is read from its own iat and expiry", () => {
  const t = tokenFor(30);
  const iat = issuedAtOf(t.token);
  assert.ok(iat !== null && Math.abs(iat - Date.now()) < 2_000, String(iat));
  assert.equal(t.expiresAt.getTime() - iat, 30_000);
  assert.equal(renewalTime({ token: t.token, expiresAt: t.expiresAt.toISOString() }), iat + 20_000);
  assert.equal(issuedAtOf('not-a-jwt'), null);
  assert.equal(issuedAtOf('a.!!!.c'), null);
  assert.equal(issuedAtOf(`x.${Buffer.from('{"sub":"s"}').toString('base64url')}.y`), null);
});

test('a 30 s token is used for 20 s, not renewed before every request', () => {
  const t = tokenFor(30);
  const iat = issuedAtOf(t.token)!;
  const held = { token: t.token, expiresAt: t.expiresAt.toISOString() };
  assert.equal(renewalDue(held, iat), false, 'fresh');
  assert.equal(renewalDue(held, iat + 19_999), false);
  assert.equal(renewalDue(held, iat + 20_000), true);
  // Every form of expiry the callers keep: ISO (CLI, dashboard), ms (worker), Date.
  assert.equal(renewalDue({ token: t.token, expiresAt: t.expiresAt.getTime() }, iat + 10_000), false);
  assert.equal(renewalDue({ token: t.token, expiresAt: t.expiresAt }, iat + 25_000), true);
});

test('an hour-long token is renewed a minute before its expiry', () => {
  const t = tokenFor(3600);
  const held = { token: t.token, expiresAt: t.expiresAt.toISOString() };
  const expires = t.expiresAt.getTime();
  assert.equal(renewalDue(held, expires - 60_001), false);
  assert.equal(renewalDue(held, expires - 60_000), true);
});

test('no token, no expiry, or one that is not a JWT', () => {
  assert.equal(renewalDue({}), true);
  assert.equal(renewalDue({ token: null, expiresAt: 0 }), true);
  assert.equal(renewalDue({ token: 't', expiresAt: 'not a date' }), true);
  const expires = Date.now() + 30_000;
  // Without an iat the caller may say when it got the token; else a minute before expiry.
  assert.equal(renewalDue({ token: 'opaque', expiresAt: expires }), true);
  assert.equal(renewalDue({ token: 'opaque', expiresAt: expires, issuedAt: expires - 30_000 }), false);
});
