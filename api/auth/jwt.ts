/**
 * Short-lived access tokens. HS256 is pinned on both sides: a token whose header says another
 * algorithm (including `none`) is rejected before its signature is considered.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { KeyRole } from './api-keys.js';

export const JWT_ALGORITHM = 'HS256';
export const JWT_AUDIENCE = 'timeshare-api';
export const JWT_ISSUER = 'timeshare';

export interface Principal {
  role: KeyRole | 'admin';
  /** Tenant id for `tenant`, node-key id for `node`, 'admin' for the admin key. */
  sub: string;
  keyId?: string;
  /** When the token expires (ms since the epoch); absent for the admin key, which does not. */
  expiresAtMs?: number;
}

export interface IssuedToken {
  token: string;
  expiresAt: Date;
}

// A string secret makes jsonwebtoken probe it as a public key on every call (createPublicKey throws,
// expensively); a KeyObject built once skips that — it was 16% of the API's CPU under load.
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let k = keys.get(secret);
  if (!k) keys.set(secret, (k = createSecretKey(Buffer.from(secret, 'utf8'))));
  return k;
}

export function issueToken(
  secret: string,
  ttlSeconds: number,
  p: { role: KeyRole; sub: string; keyId: string },
): IssuedToken {
  const now = Math.floor(Date.now() / 1000);
  const token = jwt.sign({ role: p.role, kid: p.keyId, iat: now }, keyOf(secret), {
    algorithm: JWT_ALGORITHM,
    expiresIn: ttlSeconds,
    audience: JWT_AUDIENCE,
    issuer: JWT_ISSUER,
    subject: p.sub,
  });
  return { token, expiresAt: new Date((now + ttlSeconds) * 1000) };
}

// Verified tokens, keyed by their exact bytes (signature included), per secret: a client reuses its
// token for every call until it expires, and the HMAC plus claim parsing was ~7% of the API's CPU
// on the submission path. A hit is only ever the same token verified before; expiry is re-checked on
// every use, so a cached token stops working at its `exp` exactly as an uncached one would.
const VERIFIED_MAX = 10_000;
const verified = new Map<string, Map<string, { principal: Principal; expiresAtMs: number }>>();

/** Returns the principal, or null for any token that is invalid, expired or not ours. */
export function verifyToken(secret: string, token: string): Principal | null {
  let cache = verified.get(secret);
  if (!cache) verified.set(secret, (cache = new Map()));
  const hit = cache.get(token);
  if (hit) {
    if (Date.now() < hit.expiresAtMs) return hit.principal;
    cache.delete(token);
    return null;
  }
  const principal = verifyUncached(secret, token);
  if (principal) {
    // Oldest first out: Map iteration order is insertion order.
    if (cache.size >= VERIFIED_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(token, principal);
  }
  return principal?.principal ?? null;
}

function verifyUncached(secret: string, token: string): { principal: Principal; expiresAtMs: number } | null {
  try {
    const claims = jwt.verify(token, keyOf(secret), {
      algorithms: [JWT_ALGORITHM],
      audience: JWT_AUDIENCE,
      issuer: JWT_ISSUER,
    });
    if (typeof claims !== 'object' || claims === null) return null;
    const { sub, role, kid, exp, iat } = claims as jwt.JwtPayload & { role?: unknown; kid?: unknown };
    if (typeof sub !== 'string' || typeof exp !== 'number' || typeof iat !== 'number') return null;
    if (role !== 'tenant' && role !== 'node') return null;
    return {
      principal: { role, sub, keyId: typeof kid === 'string' ? kid : undefined, expiresAtMs: exp * 1000 },
      expiresAtMs: exp * 1000,
    };
  } catch {
    return null;
  }
}
