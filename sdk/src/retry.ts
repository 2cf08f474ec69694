/**
 * Retries for what the API asks to be retried. A `429` (a rate limit or quota of requests) was
 * refused before anything was done, so every request may be sent again after its `Retry-After`.
 * A `502`/`503`/`504` or a failed connection may have happened after the request took effect: only
 * requests that are safe twice are sent again — reads, `PUT`/`DELETE`, and any request with an
 * `Idempotency-Key` (a job submission with one returns the same job).
 */
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
        if (last || !safe) throw err;
        await sleep(backoff(attempt, maxDelayMs));
        continue;
      }
      if (last || !(res.status === 429 || (safe && TRANSIENT.has(res.status)))) return res;
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

/** 0.5 s, 1 s, 2 s, … with up to a quarter either way, so that clients refused together spread out. */
function backoff(attempt: number, maxDelayMs: number): number {
  const base = Math.min(maxDelayMs, 500 * 2 ** attempt);
  return Math.round(base * (0.75 + Math.random() * 0.5));
}
