/**
 * A token can die before its expiry time: the API restarted with another signing secret, say. Its
 * expiry alone cannot tell, so a request the API refuses with 401 gets one renewed token and is
 * sent once more; a second refusal is the answer (the key itself is no longer good, or the
 * credential is not the problem), not a reason to loop.
 */

/**
 * `renew` is given the refused token and returns the one to retry with, or null when there is
 * nothing to renew from; the request is retried only with a token other than the refused one.
 */
export function renewOnUnauthorized(
  renew: (refused: string) => Promise<string | null>,
  inner: (request: Request) => Promise<Response> = (request) => globalThis.fetch(request),
): typeof globalThis.fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    // A body can be read once: the copy is the one a retry sends.
    const spare = request.clone();
    const res = await inner(request);
    if (res.status !== 401) return res;
    const refused = (request.headers.get('Authorization') ?? '').replace(/^Bearer /, '');
    const fresh = await renew(refused);
    if (fresh === null || fresh === refused) return res;
    await res.body?.cancel();
    spare.headers.set('Authorization', `Bearer ${fresh}`);
    return inner(spare);
  };
}
