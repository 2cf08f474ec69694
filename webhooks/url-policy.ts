/**
 * Which webhook URLs may be called: http(s) only, and — unless the admin setting
 * TIMESHARE_WEBHOOK_ALLOW_PRIVATE allows it — no host that resolves to a loopback, private,
 * link-local or otherwise non-public address, so that a tenant cannot make the control plane
 * call into its own network (SSRF). Checked at registration and again before every delivery,
 * because DNS answers change.
 *
 * A check alone does not stop DNS rebinding: the tenant's DNS server may answer a public address to
 * the check and 127.0.0.1 to the connection's own lookup a moment later. So a delivery's connection
 * resolves through `vettedLookup`, which refuses a private answer as the check does and hands the
 * socket exactly the addresses it vetted: nothing else is ever connected to (webhooks/post.ts).
 *
 * Name resolution goes through a `Resolve` function (the system resolver by default), so that tests
 * can give answers that change between calls without touching DNS. It is bounded in time: a resolver
 * that never answers (a tenant's DNS server dropping queries, a broken local resolver) held a
 * registration's request, and its connection, forever.
 */
import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export class UrlRefused extends Error {}

/**
 * The host's name did not resolve in time: the URL is not refused (what it resolves to is unknown),
 * it could not be checked now. Apart from UrlRefused, so that a registration answers "retry" (503)
 * rather than "this URL is wrong" (400).
 */
export class ResolveTimedOut extends Error {
  constructor(
    readonly host: string,
    readonly timeoutMs: number,
  ) {
    super(`${host} did not resolve within ${timeoutMs} ms`);
    this.name = 'ResolveTimedOut';
  }
}

/** How long a lookup may take when the caller sets none (the API's: TIMESHARE_WEBHOOK_DNS_TIMEOUT_MS). */
export const RESOLVE_TIMEOUT_MS = 5_000;

/** A host's addresses, as `dns.lookup(host, { all: true })` gives them. */
export type Resolve = (host: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (host) => lookup(host, { all: true });

/**
 * `resolve(host)`, or ResolveTimedOut after `timeoutMs`. The lookup itself cannot be cancelled (the
 * system resolver's getaddrinfo runs to its own end in libuv's thread pool); only the wait for it is.
 */
async function resolveWithin(resolve: Resolve, host: string, timeoutMs: number): Promise<LookupAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ResolveTimedOut(host, timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([resolve(host), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

export function isPublicAddress(address: string): boolean {
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

/**
 * The addresses of `host` that may be connected to: all of them when private ones are allowed,
 * else all of them if every one is public (one private answer refuses the host: a client may pick
 * any of them). Refuses with UrlRefused a host that does not resolve or resolves to a private one;
 * throws ResolveTimedOut when the resolver gives no answer within `timeoutMs`.
 */
export async function vetAddresses(
  host: string,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
  timeoutMs = RESOLVE_TIMEOUT_MS,
): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  if (ipaddr.isValid(host))
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }];
  else {
    try {
      addresses = await resolveWithin(resolve, host, timeoutMs);
    } catch (err) {
      if (err instanceof ResolveTimedOut) throw err;
      const code = (err as NodeJS.ErrnoException | null)?.code;
      throw new UrlRefused(`${host} does not resolve${code ? ` (${code})` : ''}`);
    }
    if (addresses.length === 0) throw new UrlRefused(`${host} does not resolve`);
  }
  if (allowPrivate) return addresses;
  const blocked = addresses.find((a) => !isPublicAddress(a.address));
  if (blocked) throw new UrlRefused(`${host} resolves to ${blocked.address}, a private or loopback address`);
  return addresses;
}

export async function checkWebhookUrl(
  raw: string,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
  timeoutMs = RESOLVE_TIMEOUT_MS,
): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefused('only http and https URLs');
  if (url.username || url.password) throw new UrlRefused('credentials in the URL are not allowed');
  // With private addresses allowed nothing needs resolving: a name that does not resolve yet (a
  // service not started) is registered, and its deliveries fail and are retried until it does.
  if (allowPrivate) return url;
  await vetAddresses(url.hostname.replace(/^\[|\]$/g, ''), allowPrivate, resolve, timeoutMs);
  return url;
}

/**
 * A `lookup` for a delivery's socket (net.connect's option): resolves the name once, through
 * `resolve`, vets the answer as `checkWebhookUrl` does, and gives the socket only those addresses.
 * A refusal fails the connection with the UrlRefused, before any packet goes to the host.
 */
export function vettedLookup(allowPrivate: boolean, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    vetAddresses(hostname, allowPrivate, resolve).then(
      (vetted) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const usable = family ? vetted.filter((a) => a.family === family) : vetted;
        if (usable.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${family} address`);
          err.code = 'ENOTFOUND';
          callback(err, '', 0);
        } else if (options.all) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: Error) => callback(err, '', 0),
    );
  };
}
