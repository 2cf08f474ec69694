/**
 * What every command gets: where the API is, the output mode, and SDK clients as a tenant (a
 * cached token, renewed from the stored API key shortly before it expires or when the API refuses
 * it) or as an admin.
 */
import {
  apiKeyTokens,
  createTimeshareClient,
  renewalDue,
  unwrap,
  type TimeshareClient,
} from '../sdk/src/index.js';
import { readCredentials, writeCredentials, type Credentials } from './config.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

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
 * The tenant client: tokens exchanged from the held key and renewed shortly before they expire or
 * when the API refuses one (the SDK's apiKeyTokens), written back to the credentials file if `save`.
 * A login that holds only a token (no key) sends it until it is due for renewal, then says so.
 */
function tenantClient(held: Credentials, apiUrl: () => string, save: boolean): TimeshareClient {
  const { apiKey } = held;
  if (!apiKey) {
    const token = async () => {
      if (renewalDue(held))
        throw new CliError('token_expired', 'the token expired: run `timeshare login` again');
      return held.token!;
    };
    return createTimeshareClient({ baseUrl: apiUrl(), token });
  }
  const tokens = apiKeyTokens({
    baseUrl: apiUrl,
    apiKey,
    held,
    ...(save ? { onRenewed: () => writeCredentials(held) } : {}),
  });
  return createTimeshareClient({ baseUrl: apiUrl(), token: tokens.token, fetch: tokens.fetch });
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
      return tenantClient(held, () => ctx.apiUrl, !envKey);
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
