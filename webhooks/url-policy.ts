/**
 * Which webhook URLs may be called: http(s) only, and — unless the admin setting
 * TIMESHARE_WEBHOOK_ALLOW_PRIVATE allows it — no host that resolves to a loopback, private,
 * link-local or otherwise non-public address, so that a tenant cannot make the control plane
 * call into its own network (SSRF). Checked at registration and again before every delivery,
 * because DNS answers change.
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export class UrlRefused extends Error {}

export function isPublicAddress(address: string): boolean {
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefused('only http and https URLs');
  if (url.username || url.password) throw new UrlRefused('credentials in the URL are not allowed');
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    throw new UrlRefused(`${host} does not resolve`);
  }
  const blocked = addresses.find((a) => !isPublicAddress(a));
  if (blocked) throw new UrlRefused(`${host} resolves to ${blocked}, a private or loopback address`);
  return url;
}
