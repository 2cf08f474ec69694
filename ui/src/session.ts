/**
 * Who is logged in. A tenant key is exchanged for a short-lived token (POST /v1/auth/token), as the
 * CLI does, and renewed from the key shortly before it expires or when the API refuses it; the admin
 * key is sent as it is.
 * Both live in sessionStorage: gone when the tab closes, never in a cookie (nothing is sent unless
 * the page itself adds the header, so there is no cross-site request to forge).
 */
import {
  clientFromApiKey,
  createTimeshareClient,
  TimeshareError,
  unwrap,
  type TimeshareClient,
} from '../../sdk/src/index.js';

export type Role = 'tenant' | 'admin';

export interface Session {
  role: Role;
  apiKey: string;
  token?: string;
  expiresAt?: string;
  /** The tenant's name, for the header (the token exchange tells it). */
  tenantName?: string;
}

const STORAGE_KEY = 'timeshare.session';
const baseUrl = window.location.origin;

export function loadSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

function saveSession(s: Session | null): void {
  if (s) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(STORAGE_KEY);
}

export const logout = () => saveSession(null);

/**
 * Tenant and node keys carry a role prefix (api/auth/api-keys.ts) and are exchanged for a token;
 * anything else can only be the admin key, which is checked on an admin route. Throws a
 * TimeshareError for a key the API refuses.
 */
export async function login(apiKey: string): Promise<Session> {
  // Spaces only reached the API as an empty Authorization header ("Authorization header must be…").
  if (!apiKey) throw new TimeshareError(400, 'invalid_request', 'enter an API key');
  if (!/^ts[kn]_/.test(apiKey)) {
    const asAdmin = createTimeshareClient({ baseUrl, token: apiKey });
    const probe = await asAdmin.GET('/v1/pools', { params: { query: { limit: 1 } } });
    // "invalid or expired token" said nothing of what was wrong with a key typed in.
    if (probe.response.status === 401)
      throw new TimeshareError(
        401,
        'unauthorized',
        "neither a tenant API key (tsk_…) nor this system's admin key",
      );
    if (!probe.response.ok) throw TimeshareError.from(probe.response.status, probe.error);
    const s: Session = { role: 'admin', apiKey };
    saveSession(s);
    return s;
  }
  const anonymous = createTimeshareClient({ baseUrl });
  const t = await unwrap(anonymous.POST('/v1/auth/token', { body: { apiKey } }));
  if (t.role !== 'tenant') throw new TimeshareError(403, 'forbidden', 'a node key cannot use the dashboard');
  const s: Session = {
    role: 'tenant',
    apiKey,
    token: t.token,
    expiresAt: t.expiresAt,
    ...(t.tenant ? { tenantName: t.tenant.name } : {}),
  };
  saveSession(s);
  return s;
}

/**
 * The SDK client for a session. A tenant's token is renewed shortly before it expires, and once
 * more when the API refuses it (401) before then: after the API restarted with another signing
 * secret, every page of the tab answered "invalid or expired token" until the user logged in again,
 * though the key was still good (the CLI renews the same way: sdk/src/api-key.ts).
 */
export function clientFor(session: Session): TimeshareClient {
  if (session.role === 'admin') return createTimeshareClient({ baseUrl, token: session.apiKey });
  // The SDK's client for a key (sdk/src/api-key.ts): renewals land in the session, then in storage.
  const held = session;
  return clientFromApiKey(baseUrl, held.apiKey, { held, onRenewed: () => saveSession(held) });
}
