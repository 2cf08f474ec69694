/**
 * `timeshare admin tenants create|set --weight` against an API server: a weight outside 0.01–1000
 * is the API's refusal, which states the range; the tenant keeps its weight.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('tenant-weight', {
  tenant: 'cli-weighed',
  env: ({ h }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_ADMIN_KEY: h.adminKey }),
});

test('a weight out of range is refused with the range, on set and on create', async () => {
  for (const w of ['1e-9', '0', '5000']) {
    const set = await runCli(['admin', 'tenants', 'set', 'cli-weighed', '--weight', w], cli.env);
    assert.equal(set.code, 1, w);
    assert.equal(
      set.stderr.trim(),
      'error: invalid_request: weight: must be a number between 0.01 and 1000 (field: weight)',
      w,
    );
    const create = await runCli(['admin', 'tenants', 'create', 'cli-featherweight', '--weight', w], cli.env);
    assert.equal(create.code, 1, w);
    assert.match(create.stderr, /must be a number between 0\.01 and 1000 \(field: weight\)/, w);
  }
  assert.equal((await cli.h.admin(cli.h.http.get(`/v1/tenants/${cli.t.id}`)).expect(200)).body.weight, 1);
  const ok = await runCli(['admin', 'tenants', 'set', 'cli-weighed', '--weight', '0.01'], cli.env);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /tenant cli-weighed: weight 0\.01/);
  const help = await runCli(['admin', 'tenants', 'set', '--help'], cli.env);
  assert.match(help.stdout, /fair-share weight, 0\.01 to 1000/);
});
