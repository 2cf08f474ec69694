/**
 * A client that holds a tenant (or node) API key and sends short-lived tokens exchanged from it
 * (`POST /v1/auth/token`): renewed shortly before each expires (token-renewal.ts), and once more when
 * the API refuses one before then — after a restart with another signing secret every cached token
 * is refused though the key is still good (renew-on-unauthorized.ts). The CLI and the dashboard get
 * their tenant clients here.
 */
import {
  createTimeshareClient,
  TimeshareError,
  unwrap,
  type ClientOptions,
  type TimeshareClient,
  type Token,
} from './client.js';
import { renewOnUnauthorized } from './renew-on-unauthorized.js';
import { renewalDue } from './token-renewal.js';

/** The token a caller keeps between runs (a file, sessionStorage), as the exchange returned it. */
export interface CachedToken {
  token?: string;
  expiresAt?: string;
}

export interface ApiKeyTokenOptions {
  /** The API; a function when it may change between requests. */
  baseUrl: string | (() => string);
  apiKey: string;
  /**
   * A token to start from (e.g. a cached one). Each renewal is written into this object (its
   * `token` and `expiresAt`) before `onRenewed` is called, so a caller can keep it as it is.
   */
  held?: CachedToken;
  /** Told of every token the key is exchanged for, before it is sent (to cache it). */
  onRenewed?: (token: Token) => void | Promise<void>;
  /** The fetch of the exchange and of the requests. */
  fetch?: typeof globalThis.fetch;
  /** Retries of the exchange (as `createTimeshareClient`'s). */
  retry?: ClientOptions['retry'];
}

export interface ApiKeyTokens {
  /** The token to send now: the held one until it is due for renewal, then a fresh exchange. */
  token(): Promise<string>;
  /**
   * The token to send a refused (401) request again with, or null to let the refusal stand: the
   * key is refused too, or the request was not refused for its token.
   */
  afterRefusal(refused: string): Promise<string | null>;
  /** A fetch that sends a request refused with 401 once more, with `afterRefusal`'s token. */
  fetch: typeof globalThis.fetch;
}

/** The token side of `clientFromApiKey`, for a caller that builds its own client. */
export function apiKeyTokens(options: ApiKeyTokenOptions): ApiKeyTokens {
  const held: CachedToken = options.held ?? {};
  const baseUrl = typeof options.baseUrl === 'function' ? options.baseUrl : () => options.baseUrl as string;
  let renewing: Promise<string> | null = null;
  // One exchange at a time: requests refused together share the token it brings.
  const renew = () =>
    (renewing ??= (async () => {
      const anonymous = createTimeshareClient({
        baseUrl: baseUrl(),
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.retry ? { retry: options.retry } : {}),
      });
      const t = await unwrap(anonymous.POST('/v1/auth/token', { body: { apiKey: options.apiKey } }));
      Object.assign(held, { token: t.token, expiresAt: t.expiresAt });
      await options.onRenewed?.(t);
      return t.token;
    })().finally(() => (renewing = null)));
  const token = async () => (renewalDue(held) ? renew() : held.token!);
  const afterRefusal = async (refused: string) => {
    // Another request may have renewed it since this one was sent.
    const next = renewing ?? (held.token && held.token !== refused ? Promise.resolve(held.token) : renew());
    // A key the API refuses too leaves the 401 the answer: thrown, the SDK would send a read again.
    return next.catch((err: unknown) => {
      if (err instanceof TimeshareError && err.status > 0) return null;
      throw err;
    });
  };
  const inner = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  return { token, afterRefusal, fetch: renewOnUnauthorized(afterRefusal, (request) => inner(request)) };
}

export type ApiKeyClientOptions = Omit<ClientOptions, 'baseUrl' | 'token'> &
  Pick<ApiKeyTokenOptions, 'held' | 'onRenewed'>;

/**
 * A client for an API key: `clientFromApiKey('https://timeshare.example', process.env.TIMESHARE_API_KEY)`.
 * The key is exchanged on the first request (or `held` is used while it is good), renewed before
 * the token expires, and once more when the API refuses the token (401) before that.
 */
export function clientFromApiKey(
  baseUrl: string,
  apiKey: string,
  options: ApiKeyClientOptions = {},
): TimeshareClient {
  const { held, onRenewed, ...client } = options;
  const tokens = apiKeyTokens({
    baseUrl,
    apiKey,
    ...(held ? { held } : {}),
    ...(onRenewed ? { onRenewed } : {}),
    ...(client.fetch ? { fetch: client.fetch } : {}),
    ...(client.retry ? { retry: client.retry } : {}),
  });
  return createTimeshareClient({ ...client, baseUrl, token: tokens.token, fetch: tokens.fetch });
}
