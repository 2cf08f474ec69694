import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { retryDelayMs } from '../backoff.js';
import { newSecret, signedHeaders } from '../signing.js';
import type { LookupAddress } from 'node:dns';
import {
  checkWebhookUrl,
  isPublicAddress,
  ResolveTimedOut,
  UrlRefused,
  vettedLookup,
  type Resolve,
} from '../url-policy.js';

test('retry delays double from the base up to the cap, jitter within [half, whole]', () => {
  const low = () => 0;
  const high = () => 1;
  assert.deepEqual(
    [1, 2, 3, 4].map((a) => retryDelayMs(a, 1000, 60_000, high)),
    [1000, 2000, 4000, 8000],
  );
  assert.deepEqual(
    [1, 2, 3].map((a) => retryDelayMs(a, 1000, 60_000, low)),
    [500, 1000, 2000],
  );
  assert.equal(retryDelayMs(30, 1000, 60_000, high), 60_000);
});

test('loopback, private, link-local and unique-local addresses are not public', () => {
  for (const a of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '::1',
    'fc00::1',
    'fe80::1',
    '0.0.0.0',
    '::ffff:127.0.0.1',
    '100.64.0.1',
  ]) {
    assert.equal(isPublicAddress(a), false, a);
  }
  for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'])
    assert.equal(isPublicAddress(a), true, a);
});

test('URLs: http(s) only, no credentials, no private hosts unless allowed', async () => {
  const refused = (u: string, allow = false) => assert.rejects(checkWebhookUrl(u, allow), UrlRefused, u);
  await refused('ftp://93.184.216.34/');
  await refused('http://user:pw@93.184.216.34/');
  await refused('http://127.0.0.1:9000/hook');
  await refused('http://[::1]/hook');
  await refused('http://localhost/hook');
  await refused('not a url');
  assert.equal((await checkWebhookUrl('https://93.184.216.34/hook', false)).hostname, '93.184.216.34');
  assert.equal((await checkWebhookUrl('http://127.0.0.1:9000/hook', true)).port, '9000');
});

/** A resolver answering `answer` (addresses) for every name, or failing with `code`. */
const answering =
  (answer: string[] | { code: string }): Resolve =>
  async (host) => {
    if (!Array.isArray(answer))
      throw Object.assign(new Error(`getaddrinfo ${answer.code} ${host}`), { code: answer.code });
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

test('registration: a name that does not resolve is refused, unless private addresses are allowed', async () => {
  const nx = answering({ code: 'ENOTFOUND' });
  await assert.rejects(
    checkWebhookUrl('https://hooks.example.invalid/x', false, nx),
    new UrlRefused('hooks.example.invalid does not resolve (ENOTFOUND)'),
  );
  await assert.rejects(
    checkWebhookUrl('https://hooks.example.invalid/x', false, answering([])),
    new UrlRefused('hooks.example.invalid does not resolve'),
  );
  // Allowed private addresses: nothing to vet, nothing resolved (a service that is not up yet).
  assert.equal(
    (await checkWebhookUrl('https://hooks.example.invalid/x', true, nx)).hostname,
    'hooks.example.invalid',
  );
  await assert.rejects(
    checkWebhookUrl('https://hooks.example.invalid/x', false, answering(['93.184.216.34', '10.0.0.7'])),
    new UrlRefused('hooks.example.invalid resolves to 10.0.0.7, a private or loopback address'),
  );
  assert.ok(await checkWebhookUrl('https://hooks.example.invalid/x', false, answering(['93.184.216.34'])));
});

test("a connection's lookup hands the socket only the addresses it vetted", async () => {
  const look = (resolve: Resolve, allowPrivate: boolean, options: { all?: boolean; family?: number }) =>
    new Promise<LookupAddress[] | string>((ok, fail) =>
      vettedLookup(allowPrivate, resolve)('hooks.example', options, (err, address) =>
        err ? fail(err) : ok(address),
      ),
    );
  const v4v6 = answering(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
  assert.deepEqual(await look(v4v6, false, { all: true }), [
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ]);
  assert.equal(await look(v4v6, false, {}), '93.184.216.34');
  assert.deepEqual(await look(v4v6, false, { all: true, family: 6 }), [
    { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
  ]);
  // One private address in the answer refuses the host: the socket may try any of them.
  for (const answer of [['127.0.0.1'], ['93.184.216.34', '169.254.169.254'], ['::ffff:10.0.0.1']])
    await assert.rejects(look(answering(answer), false, { all: true }), UrlRefused, answer.join());
  await assert.rejects(look(answering({ code: 'EAI_AGAIN' }), false, {}), /does not resolve \(EAI_AGAIN\)/);
  // Private addresses allowed: the answer as it is, still the resolver's and no one else's.
  assert.deepEqual(await look(answering(['127.0.0.1']), true, { all: true }), [
    { address: '127.0.0.1', family: 4 },
  ]);
});

test('signed headers verify with the standardwebhooks library, and only with the right secret', () => {
  const secret = newSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  const body = JSON.stringify({ type: 'job.succeeded', data: { jobId: 'x' } });
  const headers = signedHeaders(secret, 'msg_1', body);
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  assert.throws(() => new Webhook(newSecret()).verify(body, headers));
  assert.throws(() => new Webhook(secret).verify(body.replace('x', 'y'), headers));
});

test('the HMAC key is the base64-decoded part after whsec_ (docs/api.md, Webhooks)', () => {
  const secret = newSecret();
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  assert.equal(key.length, 24);
  const body = '{"type":"job.queued"}';
  const at = new Date(1_800_000_000_000);
  const headers = signedHeaders(secret, 'msg_1', body, at);
  const mac = (k: Buffer | string) =>
    createHmac('sha256', k).update(`msg_1.1800000000.${body}`).digest('base64');
  assert.equal(headers['webhook-timestamp'], '1800000000');
  assert.equal(headers['webhook-signature'], `v1,${mac(key)}`);
  assert.notEqual(headers['webhook-signature'], `v1,${mac(secret)}`, 'not the secret as text');
});

test('the default retry schedule docs/api.md states: 2.5–5 s, 5–10 s, …, 21–43 min, then 30–60 min', () => {
  const range = (n: number) => [0, 1].map((r) => retryDelayMs(n, 5_000, 3_600_000, () => r) / 1000);
  assert.deepEqual(range(1), [2.5, 5]);
  assert.deepEqual(range(2), [5, 10]);
  assert.deepEqual(range(3), [10, 20]);
  assert.deepEqual(range(9), [640, 1_280]);
  assert.deepEqual(range(10), [1_280, 2_560]);
  assert.deepEqual(range(11), [1_800, 3_600]);
  assert.deepEqual(range(40), [1_800, 3_600]);
});

test('a resolver that never answers times out as ResolveTimedOut, not a refusal; a failing one is refused', async () => {
  const hung: Resolve = () => new Promise(() => undefined);
  const started = Date.now();
  const err = await checkWebhookUrl('https://hooks.example.test/x', false, hung, 50).catch((e: unknown) => e);
  assert.ok(err instanceof ResolveTimedOut, String(err));
  assert.equal(err.host, 'hooks.example.test');
  assert.ok(Date.now() - started < 10_000);
  const failing: Resolve = async () => {
    throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
  };
  await assert.rejects(checkWebhookUrl('https://hooks.example.test/x', false, failing, 50), UrlRefused);
});
