/**
 * Per-tenant request rate limit: a token bucket per caller, in this API process's memory (each
 * replica enforces its own share). Refill is continuous; a burst of twice the rate is allowed.
 * Over the limit: 429 `rate_limited` with `Retry-After`.
 */
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../../common/errors.js';

interface Bucket {
  tokens: number;
  at: number;
}

export function rateLimit(perSecond: number, now: () => number = () => performance.now()) {
  const buckets = new Map<string, Bucket>();
  const burst = perSecond * 2;
  let lastSweep = now();
  return (req: Request, res: Response, next: NextFunction) => {
    const who = req.principal;
    if (perSecond <= 0 || !who || who.role === 'admin') return next();
    const key = `${who.role}:${who.sub}`;
    const t = now();
    // Idle buckets are full again after burst/rate seconds: forget them so the map stays small.
    if (t - lastSweep > 60_000) {
      for (const [k, b] of buckets) if (t - b.at > (burst / perSecond) * 1000) buckets.delete(k);
      lastSweep = t;
    }
    const b = buckets.get(key) ?? { tokens: burst, at: t };
    b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * perSecond);
    b.at = t;
    buckets.set(key, b);
    if (b.tokens < 1) {
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil((1 - b.tokens) / perSecond))));
      return next(new ApiError('rate_limited', `more than ${perSecond} requests per second`));
    }
    b.tokens -= 1;
    next();
  };
}
