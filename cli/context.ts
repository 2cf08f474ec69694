/**
 * What every command gets: where the API is, the output mode, and SDK clients as a tenant (a
 * cached token, renewed from the stored API key shortly before it expires or when the API refuses
 * it) or as an admin.
 */
import { createTimeshareClient, TimeshareError, unwrap, type TimeshareClient } from '../sdk/src/index.js';
import { readCredentials, writeCredentials, type Credentials } from './config.js';
import { renewOnUnauthorized } from '../sdk/src/renew-on-unauthorized.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';
/** Renew this long before expiry, so a token never lapses between check and use. */
const RENEW_BEFORE_MS = 60_000;

export interface GlobalOptions {
  apiUrl?: string;
  json?: boolean;
}

export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Context {
  json: boolean;
  apiUrl: string;
  tenant(): Promise<TimeshareClient>;
  admin(): Promise<TimeshareClient>;
  anonymous(): TimeshareClient;
}

/** The API address, from the first of --api-url, $TIMESHARE_API_URL, the login's; it must be http(s). */
export function apiUrlOf(opts: GlobalOptions, creds: Credentials): string {
  const [url, from] =
    opts.apiUrl !== undefined
      ? [opts.apiUrl, '--api-url']
      : process.env.TIMESHARE_API_URL !== undefined
        ? [process.env.TIMESHARE_API_URL, 'TIMESHARE_API_URL']
        : creds.apiUrl !== undefined
          ? [creds.apiUrl, 'the saved login']
          : [DEFAULT_API_URL, 'the default'];
  let protocol: string | null = null;
  try {
    protocol = new URL(url).protocol;
  } catch {
    // not a URL at all
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new CliError(
      'invalid_api_url',
      `the API URL ${JSON.stringify(url)} (from ${from}) is not an http(s) URL, e.g. ${DEFAULT_API_URL}`,
    );
  }
  return url;
}

export async function exchangeKey(apiUrl: string, apiKey: string) {
  const client = createTimeshareClient({ baseUrl: apiUrl });
  return unwrap(client.POST('/v1/auth/token', { body: { apiKey } }));
}

/**
 * The tenant token each request carries: the held one until shortly before it expires, then one
 * exchanged from the held key (written back to the credentials file if `save`); `afterRefusal`
 * gives the token to send a refused request again with, or null to let the refusal stand.
 */
function tenantTokens(held: Credentials, apiUrl: () => string, save: boolean) {
  let renewing: Promise<string> | null = null;
  // One exchange at a time: requests refused together share the token it brings.
  const renew = () =>
    (renewing ??= (async () => {
      const t = await exchangeKey(apiUrl(), held.apiKey!);
      Object.assign(held, { token: t.token, expiresAt: t.expiresAt });
      if (save) await writeCredentials(held);
      return t.token;
    })().finally(() => (renewing = null)));
  const token = async () => {
    if (held.token && held.expiresAt && Date.parse(held.expiresAt) - RENEW_BEFORE_MS > Date.now()) {
      return held.token;
    }
    if (!held.apiKey) throw new CliError('token_expired', 'the token expired: run `timeshare login` again');
    return renew();
  };
  const afterRefusal = async (refused: string) => {
    if (!held.apiKey) return null;
    // Another request may have renewed it since this one was sent.
    const next = renewing ?? (held.token && held.token !== refused ? Promise.resolve(held.token) : renew());
    // A key the API refuses too leaves the 401 the answer: thrown, the SDK would send a read again.
    return next.catch((err: unknown) => {
      if (err instanceof TimeshareError && err.status > 0) return null;
      throw err;
    });
  };
  return { token, afterRefusal };
}

export function createContext(opts: GlobalOptions): Context {
  let creds: Credentials | null = null;
  const load = async () => (creds ??= await readCredentials());
  const json = opts.json ?? false;
  const ctx: Context = {
    json,
    apiUrl: apiUrlOf(opts, {}),
    async tenant() {
      const c = await load();
      ctx.apiUrl = apiUrlOf(opts, c);
      const envKey = process.env.TIMESHARE_API_KEY;
      if (!c.apiKey && !c.token && !envKey) {
        throw new CliError('not_logged_in', 'not logged in: run `timeshare login` first');
      }
      // With TIMESHARE_API_KEY (scripts, CI) the token lives in memory only; otherwise in the
      // credentials file. The SDK asks before every request, so a long `logs -f` renews too.
      const held: Credentials = envKey ? { apiKey: envKey } : c;
      const { token, afterRefusal } = tenantTokens(held, () => ctx.apiUrl, !envKey);
      return createTimeshareClient({ baseUrl: ctx.apiUrl, token, fetch: renewOnUnauthorized(afterRefusal) });
    },
    async admin() {
      const c = await load();
      ctx.apiUrl = apiUrlOf(opts, c);
      const key = process.env.TIMESHARE_ADMIN_KEY ?? c.adminKey;
      if (!key) {
        throw new CliError(
          'not_logged_in',
          'admin commands need TIMESHARE_ADMIN_KEY or `timeshare login --admin-key`',
        );
      }
      return createTimeshareClient({ baseUrl: ctx.apiUrl, token: key });
    },
    anonymous() {
      return createTimeshareClient({ baseUrl: ctx.apiUrl });
    },
  };
  return ctx;
}
