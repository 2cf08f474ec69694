/**
 * The SDK's client: openapi-fetch's typed client over the generated `paths`, plus the glue every
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

/**
 * A response's `data` is typed as its JSON body: a route that also answers another media type (the
 * event page, `text/event-stream` when asked for it) keeps its JSON type, and the other media are
 * read with `parseAs: 'stream'` (or 'text', 'blob'), which types `data` by itself.
 */
type Media = 'application/json';
export type TimeshareClient = Client<paths, Media>;

export interface ClientOptions {
  baseUrl: string;
  /** A token or admin key, or a function asked before every request (e.g. one that refreshes). */
  token?: string | (() => string | Promise<string>);
  fetch?: typeof globalThis.fetch;
  /**
   * Retries of what may succeed later (sdk/src/retry.ts): a `rate_limited` 429 after its
   * Retry-After (never a `quota_exceeded` one), and for requests safe to send twice a 502/503/504 or
   * a failed connection. Default: 2 retries.
   */
  retry?: RetryOptions;
}

/**
 * What a fetch threw instead of answering, and for which request. Marked where fetch is called so
 * that `unwrap` turns these, and only these, into `unreachable`: an error of the caller's token
 * function is not the API's absence. The thrown value stays as it is for callers of the bare client.
 */
const notAnswered = new WeakMap<object, Request>();

export function createTimeshareClient(options: ClientOptions): TimeshareClient {
  const inner = options.fetch ?? globalThis.fetch;
  const send = async (request: Request): Promise<Response> => {
    try {
      return await inner(request);
    } catch (err) {
      // A network failure is a TypeError (the fetch standard's); an abort is the caller's own doing
      // and keeps its AbortError, and anything else a wrapping fetch threw stays its own error.
      if (!request.signal.aborted && err instanceof TypeError) notAnswered.set(err, request);
      throw err;
    }
  };
  const client = createClient<paths, Media>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: retryingFetch(send, options.retry),
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

/**
 * An error answer of the API (or of something in front of it that did not answer JSON), or no
 * answer at all: `status` 0, `code` `unreachable`, the fetch's error as `cause`.
 */
export class TimeshareError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly type: string = 'api_error',
    readonly param: string | null = null,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'TimeshareError';
  }

  /** The request got no answer (refused, reset, unresolvable host, TLS failure…), retries included. */
  static unreachable(request: Request, cause: unknown): TimeshareError {
    // undici says only "fetch failed"; what failed (e.g. connect ECONNREFUSED) is its cause.
    const inner = (cause as { cause?: { message?: unknown } }).cause?.message;
    const why = typeof inner === 'string' ? inner : cause instanceof Error ? cause.message : String(cause);
    return new TimeshareError(
      0,
      'unreachable',
      `cannot reach the API (${request.method} ${request.url}): ${why}`,
      'api_connection_error',
      null,
      cause,
    );
  }

  static from(status: number, body: unknown): TimeshareError {
    const e = (body as Partial<ApiErrorBody> | undefined)?.error;
    if (e && typeof e.code === 'string')
      return new TimeshareError(status, e.code, e.message, e.type, e.param);
    return new TimeshareError(status, `http_${status}`, typeof body === 'string' ? body : `HTTP ${status}`);
  }
}

/**
 * The data of a successful answer, or a thrown TimeshareError — for an error answer, or for none
 * (`unreachable`): `await unwrap(client.GET(...))`.
 */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let answer: Awaited<typeof call>;
  try {
    answer = await call;
  } catch (err) {
    const request = typeof err === 'object' && err !== null ? notAnswered.get(err) : undefined;
    throw request ? TimeshareError.unreachable(request, err) : err;
  }
  const { data, error, response } = answer;
  if (!response.ok) throw TimeshareError.from(response.status, error);
  return data as T;
}
