/**
 * Retries for what may succeed later. A `429 rate_limited` was refused before anything was done,
 * so every request may be sent again after its `Retry-After`; a `429 quota_exceeded` is not, since
 * it stays refused until the tenant's jobs finish or its quota is raised. A `502`/`503`/`504` or a
 * failed connection may have happened after the request took effect: only requests that are safe
 * twice are sent again — reads, `PUT`/`DELETE`, and any request with an `Idempotency-Key` (a job
 * submission with one returns the same job). A request its caller aborted is never sent again.
 */
import type { components } from './generated/schema.js';
export interface RetryOptions {
  /** Attempts after the first (default 2; 0: never retry). */
  maxRetries?: number;
  /** The longest wait before one retry, whatever `Retry-After` asks (default 30 s). */
  maxDelayMs?: number;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const TRANSIENT = new Set([502, 503, 504]);
type ErrorCode = components['schemas']['Error']['error']['code'];
/** The 429 codes a later try may pass; any other code the API puts on a 429 is final. */
const RETRIED_429_CODES: ReadonlySet<string> = new Set<ErrorCode>(['rate_limited']);

export function retryingFetch(
  inner: (input: Request) => Promise<Response>,
  options: RetryOptions = {},
): (input: Request) => Promise<Response> {
  const maxRetries = options.maxRetries ?? 2;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  return async (request) => {
    const safe = SAFE_METHODS.has(request.method) || request.headers.has('Idempotency-Key');
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= maxRetries;
      // The body can be read once: each attempt sends a copy, the original stays for the next.
      const sent = last ? request : request.clone();
      let res: Response;
      try {
        res = await inner(sent);
      } catch (err) {
        if (last || !safe || request.signal.aborted) throw err;
        await sleep(backoff(attempt, maxDelayMs));
        continue;
      }
      if (last || !(res.status === 429 ? await retried429(res) : safe && TRANSIENT.has(res.status)))
        return res;
      const asked = Number(res.headers.get('Retry-After'));
      await res.body?.cancel();
      await sleep(
        Number.isFinite(asked) && asked > 0
          ? Math.min(asked * 1000, maxDelayMs)
          : backoff(attempt, maxDelayMs),
      );
    }
  };
}

/**
 * By the body's code, read from a copy so that the caller still gets the body whole. A 429 without
 * one was not written by the API but by a limiter in front of it, which refuses before forwarding:
 * retried as a rate limit.
 */
async function retried429(res: Response): Promise<boolean> {
  let code: unknown;
  try {
    code = (JSON.parse(await res.clone().text()) as { error?: { code?: unknown } } | null)?.error?.code;
  } catch {
    return true;
  }
  return typeof code !== 'string' || RETRIED_429_CODES.has(code);
}

/** 0.5 s, 1 s, 2 s, … with up to a quarter either way, so that clients refused together spread out. */
function backoff(attempt: number, maxDelayMs: number): number {
  const base = Math.min(maxDelayMs, 500 * 2 ** attempt);
  return Math.round(base * (0.75 + Math.random() * 0.5));
}
