import { test } from 'node:test';
import assert from 'node:assert/strict';
import jwt from 'jsonwebtoken';
import { issueToken, verifyToken } from '../auth/jwt.js';

const secret = 'x'.repeat(40);

test('issued tokens verify; tampered, foreign-role and alg-switched tokens do not', () => {
  const { token, expiresAt } = issueToken(secret, 60, { role: 'tenant', sub: 't1', keyId: 'k1' });
  assert.deepEqual(verifyToken(secret, token), {
    role: 'tenant',
    sub: 't1',
    keyId: 'k1',
    expiresAtMs: expiresAt.getTime(),
  });
  const [h, p, s] = token.split('.');
  const forged = Buffer.from(
    JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: 't2' }),
  ).toString('base64url');
  assert.equal(verifyToken(secret, `${h}.${forged}.${s}`), null);
  const admin = jwt.sign({ role: 'admin' }, secret, {
    algorithm: 'HS256',
    audience: 'timeshare-api',
    issuer: 'timeshare',
    subject: 'x',
    expiresIn: 60,
  });
  assert.equal(verifyToken(secret, admin), null, 'admin is never a token role');
  const hs512 = jwt.sign({ role: 'tenant' }, secret, {
    algorithm: 'HS512',
    audience: 'timeshare-api',
    issuer: 'timeshare',
    subject: 'x',
    expiresIn: 60,
  });
  assert.equal(verifyToken(secret, hs512), null);
});

test('a verified token stays valid from the cache only until its exp, and only under its own secret', () => {
  const { token, expiresAt } = issueToken(secret, 60, { role: 'tenant', sub: 't1', keyId: 'k1' });
  const principal = { role: 'tenant', sub: 't1', keyId: 'k1', expiresAtMs: expiresAt.getTime() };
  assert.deepEqual(verifyToken(secret, token), principal);
  assert.deepEqual(verifyToken(secret, token), principal, 'cache hit');
  assert.equal(verifyToken('y'.repeat(40), token), null, 'another secret does not share the cache');
  const realNow = Date.now;
  try {
    Date.now = () => expiresAt.getTime();
    assert.equal(verifyToken(secret, token), null, 'expired at exp, cached or not');
    Date.now = realNow;
    assert.deepEqual(verifyToken(secret, token), principal, 're-verified');
  } finally {
    Date.now = realNow;
  }
});
