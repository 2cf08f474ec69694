/**
 * `timeshare … | head`: the reader closes the pipe before the CLI is done writing. The CLI stops
 * there without a word, with the status a shell shows for a tool killed by SIGPIPE.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BROKEN_PIPE_EXIT_CODE } from '../../cli/broken-pipe.js';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('pipe', {
  env: ({ h }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_ADMIN_KEY: h.adminKey }),
});

test('output into a closed pipe: a command that answers without the API exits quietly', async () => {
  const r = await runCli(['completion', 'bash'], cli.env, { closeStdout: true });
  assert.equal(r.stderr, '');
  assert.equal(r.code, BROKEN_PIPE_EXIT_CODE);
});

test("output into a closed pipe: a table printed after the API's answer exits quietly", async () => {
  await cli.h.createTenant('piped');
  const r = await runCli(['admin', 'tenants', 'list'], cli.env, { closeStdout: true });
  assert.equal(r.stderr, '');
  assert.equal(r.code, BROKEN_PIPE_EXIT_CODE);
});
