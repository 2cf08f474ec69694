/**
 * When a client renews its token: shortly before it expires, so that it never lapses between the
 * check and the request it is sent with. That is a minute before, or a third of the token's lifetime
 * when that is shorter: `TIMESHARE_JWT_TTL_SECONDS` may be as short as 30 s, and renewing a
 * 30-second token a minute early renewed it before every request (an idle worker exchanged its key
 * 42–53 times a minute). The SDK's API-key client, the CLI, the dashboard and the worker all ask here.
 */

/** The most a token is renewed ahead of its expiry. */
export const RENEW_BEFORE_MAX_MS = 60_000;

/** How long before its expiry a token of this lifetime is renewed: min(60 s, a third of it). */
export function renewBeforeMs(lifetimeMs: number): number {
  // A lifetime that cannot be told (or makes no sense) gets the full minute.
  if (!Number.isFinite(lifetimeMs) || lifetimeMs <= 0) return RENEW_BEFORE_MAX_MS;
  return Math.min(RENEW_BEFORE_MAX_MS, lifetimeMs / 3);
}

/** When a JWT was issued (its `iat` claim), in ms since the epoch; null for anything else. */
export function issuedAtOf(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    // base64url without padding; atob is in browsers and Node alike.
    const b64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const claims = JSON.parse(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))) as { iat?: unknown };
    return typeof claims.iat === 'number' && Number.isFinite(claims.iat) ? claims.iat * 1000 : null;
  } catch {
    return null;
  }
}

/** A token as the token exchange (`POST /v1/auth/token`) returned it, or as a caller keeps it. */
export interface HeldToken {
  token?: string | null;
  /** ISO 8601 (as the API answers), ms since the epoch, or a Date. */
  expiresAt?: string | number | Date | null;
  /** When it was issued, in ms, for a token that does not say (its JWT `iat` comes first). */
  issuedAt?: number;
}

/**
 * When to renew the token, in ms since the epoch: its expiry less `renewBeforeMs` of its lifetime
 * (from its `iat` to its expiry, both the API's clock); NaN when there is no usable token.
 */
export function renewalTime(held: HeldToken): number {
  if (!held.token || held.expiresAt === undefined || held.expiresAt === null) return NaN;
  const expires = new Date(held.expiresAt).getTime();
  if (Number.isNaN(expires)) return NaN;
  const issued = issuedAtOf(held.token) ?? held.issuedAt;
  return expires - renewBeforeMs(issued === undefined ? NaN : expires - issued);
}

/** Whether a held token is to be renewed before the next request (also when there is none). */
export function renewalDue(held: HeldToken, now: number = Date.now()): boolean {
  const at = renewalTime(held);
  return Number.isNaN(at) || now >= at;
}
