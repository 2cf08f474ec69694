/**
 * Request rate limits: a token bucket per key, in this API process's memory (each replica enforces
 * its own share). Refill is continuous; a burst of twice the rate is allowed. Over the limit: 429
 * `rate_limited` with `Retry-After`. Two limiters per process: one per principal (tenant or node)
 * and one per client address, for requests without credentials and for the token exchange, so that
 * nobody can make the API work unboundedly without a credential. Each serves both the Express stack
 * and the submission fast path, so the two share the budget.
 */
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../../common/errors.js';
import type { Principal } from '../auth/jwt.js';

interface Bucket {
  tokens: number;
  at: number;
}

export interface RateLimiter {
  /** Takes one request from the caller's bucket: null when allowed, else the seconds to wait. */
  take(who: Pick<Principal, 'role' | 'sub'> | undefined): number | null;
  /** The same, for a key of the caller's choosing (a client address). */
  takeKey(key: string): number | null;
  readonly perSecond: number;
}

export function createRateLimiter(
  perSecond: number,
  now: () => number = () => performance.now(),
): RateLimiter {
  const buckets = new Map<string, Bucket>();
  const burst = Math.max(1, perSecond * 2);
  let lastSweep = now();
  const takeKey = (key: string): number | null => {
    if (perSecond <= 0) return null;
    const t = now();
    // Idle buckets are full again after burst/rate seconds: forget them so the map stays small.
    if (t - lastSweep > 60_000) {
      for (const [k, b] of buckets) if (t - b.at > (burst / perSecond) * 1000) buckets.delete(k);
      lastSweep = t;
    }
    let b = buckets.get(key);
    if (!b) buckets.set(key, (b = { tokens: burst, at: t }));
    b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * perSecond);
    b.at = t;
    if (b.tokens < 1) return Math.max(1, Math.ceil((1 - b.tokens) / perSecond));
    b.tokens -= 1;
    return null;
  };
  return {
    perSecond,
    takeKey,
    take(who) {
      if (!who || who.role === 'admin') return null;
      return takeKey(`${who.role}:${who.sub}`);
    },
  };
}

/** The 429 for a caller over its rate (Retry-After is set by whoever sends the response). */
export const rateLimited = (limiter: RateLimiter, retryAfterSeconds: number) =>
  new ApiError('rate_limited', `more than ${limiter.perSecond} requests per second`, null, {
    retryAfterSeconds,
  });

export function rateLimit(limiter: RateLimiter) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const wait = limiter.take(req.principal);
    next(wait === null ? undefined : rateLimited(limiter, wait));
  };
}

/** The key of a client address; requests over one socket share it. */
export const clientAddress = (socket: { remoteAddress?: string | undefined }): string =>
  socket.remoteAddress ?? 'unknown';
