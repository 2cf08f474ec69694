import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadWorkerConfig } from '../config.js';
import { loadSchedulerConfig } from '../../scheduler/config.js';
import { loadConfig } from '../../api/config.js';
import { storageConfigFromEnv } from '../../common/storage/index.js';

const nodeKey = { TIMESHARE_NODE_KEY: 'tsn_test' };

test("the worker's S3 settings are part of its validated configuration", () => {
  const cfg = loadWorkerConfig([], { ...nodeKey, TIMESHARE_S3_BUCKET: 'ckpt', TIMESHARE_S3_PREFIX: 'p/' });
  assert.equal(storageConfigFromEnv(cfg, cfg.TIMESHARE_STORAGE_ROOT).s3?.bucket, 'ckpt');
  assert.throws(
    () => loadWorkerConfig([], { ...nodeKey, TIMESHARE_S3_FORCE_PATH_STYLE: 'maybe' }),
    /TIMESHARE_S3_FORCE_PATH_STYLE/,
  );
});

test('the variables every process shares are read and defaulted the same way', () => {
  const env = { TIMESHARE_ADMIN_KEY: 'a'.repeat(16), TIMESHARE_JWT_SECRET: 's'.repeat(32) };
  const configs = [loadConfig(env), loadSchedulerConfig({}), loadWorkerConfig([], nodeKey)];
  for (const c of configs) {
    assert.equal(c.REDIS_URL, 'redis://127.0.0.1:6379');
    assert.equal(c.TIMESHARE_REDIS_PREFIX, 'ts');
    assert.equal(c.LOG_LEVEL, 'info');
  }
  for (const load of [
    () => loadConfig({ ...env, LOG_LEVEL: 'loud' }),
    () => loadSchedulerConfig({ LOG_LEVEL: 'loud' }),
  ])
    assert.throws(load, /LOG_LEVEL/);
});

test('a node timeout shorter than three heartbeat periods is refused at start', () => {
  // Shorter, the daemon would stop speaking for its node between two accepted heartbeats and its
  // job processes would stop though the node is alive (worker-node/supervision.ts).
  assert.throws(
    () =>
      loadWorkerConfig([], {
        ...nodeKey,
        TIMESHARE_NODE_TIMEOUT_MS: '10000',
        TIMESHARE_HEARTBEAT_MS: '5000',
      }),
    /TIMESHARE_NODE_TIMEOUT_MS/,
  );
  const ok = loadWorkerConfig([], {
    ...nodeKey,
    TIMESHARE_NODE_TIMEOUT_MS: '15000',
    TIMESHARE_HEARTBEAT_MS: '5000',
  });
  assert.equal(ok.TIMESHARE_NODE_TIMEOUT_MS, 15_000);
});

test("the API client's retry delays: a list of milliseconds, the old schedule by default", () => {
  assert.deepEqual(loadWorkerConfig([], nodeKey).TIMESHARE_API_RETRY_MS, [200, 500, 1000, 2000, 4000, 8000]);
  assert.deepEqual(
    loadWorkerConfig([], { ...nodeKey, TIMESHARE_API_RETRY_MS: '500, 1500' }).TIMESHARE_API_RETRY_MS,
    [500, 1500],
  );
  for (const bad of ['', '100,,200', '-1', '60001', 'soon', Array(21).fill('1').join(',')])
    assert.throws(
      () => loadWorkerConfig([], { ...nodeKey, TIMESHARE_API_RETRY_MS: bad }),
      /TIMESHARE_API_RETRY_MS/,
      bad,
    );
});
