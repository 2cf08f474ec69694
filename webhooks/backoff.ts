/**
 * Delay before retry number `attempt` (1 = the first retry): exponential from `baseMs`, capped at
 * `maxMs`, with "equal jitter" (half fixed, half random) so that endpoints that failed together
 * do not all come back in the same instant.
 */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}
