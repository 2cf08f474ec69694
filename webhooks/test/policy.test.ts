import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { retryDelayMs } from '../backoff.js';
import { newSecret, signedHeaders } from '../signing.js';
import { checkWebhookUrl, isPublicAddress, UrlRefused } from '../url-policy.js';

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

test('signed headers verify with the standardwebhooks library, and only with the right secret', () => {
  const secret = newSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  const body = JSON.stringify({ type: 'job.succeeded', data: { jobId: 'x' } });
  const headers = signedHeaders(secret, 'msg_1', body);
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  assert.throws(() => new Webhook(newSecret()).verify(body, headers));
  assert.throws(() => new Webhook(secret).verify(body.replace('x', 'y'), headers));
});
