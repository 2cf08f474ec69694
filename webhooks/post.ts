/**
 * One webhook request: a POST over a connection of its own whose name resolution is the vetted
 * lookup (url-policy.ts), so that the socket connects to exactly the addresses that lookup
 * approved, never to what a second resolution might answer (DNS rebinding). The Host header and
 * the TLS server name stay the URL's host, so HTTPS certificates are verified against the name the
 * tenant registered. Redirects are not followed: a 3xx is an answer like any other non-2xx (and
 * retried), since its Location could point anywhere, private addresses included.
 *
 * A connection per request (`agent: false`): a pooled socket would have been opened to the
 * addresses vetted for an earlier attempt. The answer's body is not read.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

export async function postWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  lookup: LookupFunction,
  signal: AbortSignal,
): Promise<number> {
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise<number>((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: false,
      lookup,
      signal,
    });
    req.once('response', (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy();
    });
    // An abort's error says only that it was aborted: say why (the attempt's timeout, a shutdown).
    req.on('error', (err) => reject(signal.aborted && signal.reason instanceof Error ? signal.reason : err));
    req.end(body);
  });
}
