/**
 * A bad variable stops a real process at start: each service says which variable and what it
 * accepts and exits with CONFIG_EXIT_CODE before it connects to anything, and `npm start` stops
 * (rather than starting the child again and again) when one of its children refuses its own.
 */
import { existsSync, mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG_EXIT_CODE } from '../../common/config.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deleteKeys, testPrefix, testRedisUrl } from '../helpers/redis.js';
import { freePort, repoRoot, startProcess } from '../helpers/processes.js';

const prefix = testPrefix();
const data = mkdtempSync(path.join(tmpdir(), 'timeshare-config-'));
const dotData = path.join(repoRoot, '.data');
const hadDotData = existsSync(dotData);
let db: TestDatabase;

before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
  await deleteKeys(prefix);
  rmSync(data, { recursive: true, force: true });
  // The launcher makes .data for the services it would start itself; removed only if still empty.
  if (!hadDotData) {
    try {
      rmdirSync(dotData);
    } catch {
      // not empty: something else uses it now
    }
  }
});

/** Addresses no process may reach: a process that got past its configuration would hang, not pass. */
const unreachable = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:9/none',
  REDIS_URL: 'redis://127.0.0.1:9',
  TIMESHARE_REDIS_PREFIX: prefix,
};

for (const [entry, env, args, expected] of [
  [
    'scheduler/main.ts',
    { TIMESHARE_ROUND_INTERVAL_MS: 'abc' },
    [],
    /^ {2}TIMESHARE_ROUND_INTERVAL_MS: must be an integer from 50 to 60000; got "abc"$/m,
  ],
  [
    'api/main.ts',
    {
      TIMESHARE_ADMIN_KEY: 'a'.repeat(16),
      TIMESHARE_JWT_SECRET: 's'.repeat(32),
      TIMESHARE_RATE_LIMIT_PER_SECOND: '',
    },
    [],
    /^ {2}TIMESHARE_RATE_LIMIT_PER_SECOND: must be a number from 0 to 1000000; got ""$/m,
  ],
  [
    'webhooks/main.ts',
    { TIMESHARE_WEBHOOK_POLL_MS: '1e99' },
    [],
    /^ {2}TIMESHARE_WEBHOOK_POLL_MS: must be an integer from 10 to 2147483647; got "1e99"$/m,
  ],
  [
    'worker-node/main.ts',
    { TIMESHARE_NODE_KEY: 'tsn_x', TIMESHARE_HEARTBEAT_MS: '-5' },
    ['--virtual-devices', '0'],
    /TIMESHARE_HEARTBEAT_MS: must be an integer from 100 to 2147483647; got "-5"\n {2}--virtual-devices: must be an integer from 1 to 64; got "0"/,
  ],
  [
    'worker-node/enroll.ts',
    { TIMESHARE_ADMIN_KEY: 'a'.repeat(16), TIMESHARE_API_URL: 'ftp://api' },
    [],
    /TIMESHARE_API_URL: must be a URL starting with http:\/\/ or https:\/\//,
  ],
  [
    'infra/local/start.ts',
    { TIMESHARE_RESTART_BACKOFF_MS: '0' },
    [],
    /^ {2}TIMESHARE_RESTART_BACKOFF_MS: must be an integer from 1 to 30000; got "0"$/m,
  ],
] as const) {
  test(`${entry} refuses a bad variable at start`, { timeout: 60_000 }, async () => {
    const proc = startProcess(entry, { ...unreachable, ...env }, [], [...args]);
    const code = await proc.exited;
    assert.equal(code, CONFIG_EXIT_CODE, proc.output());
    assert.match(proc.output(), /invalid configuration:\n/);
    assert.match(proc.output(), expected);
    assert.doesNotMatch(proc.output(), /at .*\.ts:\d+/, 'a message, not a stack trace');
  });
}

test(
  'npm start stops when a child refuses its configuration instead of restarting it',
  { timeout: 120_000 },
  async () => {
    const launcher = startProcess('infra/local/start.ts', {
      DATABASE_URL: db.url,
      REDIS_URL: testRedisUrl(),
      TIMESHARE_REDIS_PREFIX: prefix,
      TIMESHARE_STORAGE_ROOT: path.join(data, 'checkpoints'),
      TIMESHARE_OUTBOX_DIR: path.join(data, 'outbox'),
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      // Only the API reads it: the launcher starts the API, which refuses it.
      TIMESHARE_BODY_LIMIT: 'lots',
      TIMESHARE_RESTART_BACKOFF_MS: '100',
    });
    const code = await launcher.exited;
    const out = launcher.output();
    assert.equal(code, 1, out);
    assert.match(out, /\[api\] api: invalid configuration:\n\[api\] {3}TIMESHARE_BODY_LIMIT: must be a size/);
    assert.match(out, /\[start\] api refused its configuration; stopping/);
    assert.equal([...out.matchAll(/\[start\] api started/g)].length, 1, 'started once, not again');
  },
);
