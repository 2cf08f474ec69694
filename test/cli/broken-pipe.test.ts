/**
 * `timeshare … | head`: the reader closes the pipe before the CLI is done writing. The CLI stops
 * there without a word, with the status a shell shows for a tool killed by SIGPIPE.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BROKEN_PIPE_EXIT_CODE } from '../../cli/broken-pipe.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { runCli } from './run-cli.js';

let h: Harness;
let home: string;
let env: Record<string, string>;
before(async () => {
  h = await startHarness();
  home = await mkdtemp(path.join(tmpdir(), 'timeshare-cli-pipe-'));
  env = {
    XDG_CONFIG_HOME: path.join(home, 'config'),
    TIMESHARE_API_URL: h.api.url,
    TIMESHARE_ADMIN_KEY: h.adminKey,
  };
});
after(async () => {
  await h.close();
  await rm(home, { recursive: true, force: true });
});

test('output into a closed pipe: a command that answers without the API exits quietly', async () => {
  const r = await runCli(['completion', 'bash'], env, { closeStdout: true });
  assert.equal(r.stderr, '');
  assert.equal(r.code, BROKEN_PIPE_EXIT_CODE);
});

test("output into a closed pipe: a table printed after the API's answer exits quietly", async () => {
  await h.createTenant('piped');
  const r = await runCli(['admin', 'tenants', 'list'], env, { closeStdout: true });
  assert.equal(r.stderr, '');
  assert.equal(r.code, BROKEN_PIPE_EXIT_CODE);
});
