/**
 * The Timeshare SDK: openapi-fetch's typed client over the generated `paths`, plus the glue every
 * caller needs — a bearer token (fixed, or asked for before each request so it can be refreshed),
 * retries of what the API asks to be retried, and one error type carrying the API's
 * `{error: {type, code, message, param}}`.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/schema.js';
import { retryingFetch, type RetryOptions } from './retry.js';

export type { RetryOptions } from './retry.js';

export type { components, paths, operations } from './generated/schema.js';
type Schemas = components['schemas'];
export type Job = Schemas['Job'];
export type JobSpec = Schemas['JobSpec'];
export type JobEvent = Schemas['JobEvent'];
export type Checkpoint = Schemas['Checkpoint'];
export type MetricPoint = Schemas['MetricPoint'];
export type Usage = Schemas['Usage'];
export type Quota = Schemas['Quota'];
export type Tenant = Schemas['Tenant'];
export type Token = Schemas['Token'];
export type ApiErrorBody = Schemas['Error'];

export type TimeshareClient = Client<paths>;

export interface ClientOptions {
  baseUrl: string;
  /** A token or admin key, or a function asked before every request (e.g. one that refreshes). */
  token?: string | (() => string | Promise<string>);
  fetch?: typeof globalThis.fetch;
  /**
   * Retries of what the API asks to be retried (sdk/src/retry.ts): a 429 after its Retry-After, and
   * for requests safe to send twice a 502/503/504 or a failed connection. Default: 2 retries.
   */
  retry?: RetryOptions;
}

export function createTimeshareClient(options: ClientOptions): TimeshareClient {
  const inner = options.fetch ?? globalThis.fetch;
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: retryingFetch((request) => inner(request), options.retry),
  });
  const { token } = options;
  if (token !== undefined) {
    client.use({
      async onRequest({ request }) {
        const value = typeof token === 'function' ? await token() : token;
        request.headers.set('Authorization', `Bearer ${value}`);
        return request;
      },
    });
  }
  return client;
}

/** An error answer of the API (or of something in front of it that did not answer JSON). */
export class TimeshareError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly type: string = 'api_error',
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'TimeshareError';
  }

  static from(status: number, body: unknown): TimeshareError {
    const e = (body as Partial<ApiErrorBody> | undefined)?.error;
    if (e && typeof e.code === 'string')
      return new TimeshareError(status, e.code, e.message, e.type, e.param);
    return new TimeshareError(status, `http_${status}`, typeof body === 'string' ? body : `HTTP ${status}`);
  }
}

/** The data of a successful answer, or a thrown TimeshareError: `await unwrap(client.GET(...))`. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw TimeshareError.from(response.status, error);
  return data as T;
}
