/**
 * The Timeshare SDK, one import for all of it: the typed client and its error type (client.ts), a
 * client from an API key that renews its token (api-key.ts), when to renew a token
 * (token-renewal.ts), the retry of a request refused for its token (renew-on-unauthorized.ts), and
 * every page of a job's metrics (metrics.ts).
 */
export * from './client.js';
export { apiKeyTokens, clientFromApiKey } from './api-key.js';
export type { ApiKeyClientOptions, ApiKeyTokenOptions, ApiKeyTokens, CachedToken } from './api-key.js';
export { renewOnUnauthorized } from './renew-on-unauthorized.js';
export { issuedAtOf, renewalDue, renewalTime, renewBeforeMs, RENEW_BEFORE_MAX_MS } from './token-renewal.js';
export type { HeldToken } from './token-renewal.js';
export { allJobMetrics } from './metrics.js';
export type { MetricsQuery } from './metrics.js';
