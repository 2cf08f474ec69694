/** What `npm start` gives its processes: a metrics port of its own to each scheduler and the worker. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childEnvironments, metricsPortsProblem, metricsUrls } from '../children.js';
import { loadLauncherConfig } from '../config.js';

const shared = { DATABASE_URL: 'postgresql://db/x', TIMESHARE_METRICS_PORT: '9464', HOST: '127.0.0.1' };

test('TIMESHARE_METRICS_PORT=P gives scheduler-a P, scheduler-b P+1 and the worker P+2, on HOST', () => {
  const config = loadLauncherConfig({ TIMESHARE_METRICS_PORT: '9464' });
  const env = childEnvironments(shared, config);
  const ports = Object.fromEntries(Object.entries(env).map(([name, e]) => [name, e.TIMESHARE_METRICS_PORT]));
  assert.deepEqual(ports, {
    api: undefined,
    'scheduler-a': '9464',
    'scheduler-b': '9465',
    webhooks: undefined,
    worker: '9466',
  });
  for (const name of ['scheduler-a', 'scheduler-b', 'worker'] as const) {
    assert.equal(env[name].TIMESHARE_METRICS_HOST, '127.0.0.1', `${name} listens where the API does`);
    assert.equal(env[name].DATABASE_URL, shared.DATABASE_URL, `${name} gets the shared environment`);
  }
  assert.deepEqual(metricsUrls(config), [
    { name: 'api', url: 'http://127.0.0.1:8080/metrics' },
    { name: 'scheduler-a', url: 'http://127.0.0.1:9464/metrics' },
    { name: 'scheduler-b', url: 'http://127.0.0.1:9465/metrics' },
    { name: 'worker', url: 'http://127.0.0.1:9466/metrics' },
  ]);
  assert.equal(metricsPortsProblem(config), null);
});

test('TIMESHARE_METRICS_HOST, else HOST, is where the endpoints listen', () => {
  const onHost = childEnvironments(
    shared,
    loadLauncherConfig({ HOST: '0.0.0.0', TIMESHARE_METRICS_PORT: '9100' }),
  );
  assert.equal(onHost['scheduler-b'].TIMESHARE_METRICS_HOST, '0.0.0.0');
  const own = childEnvironments(
    shared,
    loadLauncherConfig({ TIMESHARE_METRICS_PORT: '9100', TIMESHARE_METRICS_HOST: '10.0.0.5' }),
  );
  assert.equal(own.worker.TIMESHARE_METRICS_HOST, '10.0.0.5');
  assert.throws(() => loadLauncherConfig({ TIMESHARE_METRICS_HOST: ' ' }), /TIMESHARE_METRICS_HOST/);
});

test('port 0 leaves every endpoint off; ports past 65535 or over the API are refused', () => {
  const off = loadLauncherConfig({});
  const env = childEnvironments(shared, off);
  for (const name of ['scheduler-a', 'scheduler-b', 'worker'] as const)
    assert.equal(env[name].TIMESHARE_METRICS_PORT, '0');
  assert.deepEqual(metricsUrls(off), [{ name: 'api', url: 'http://127.0.0.1:8080/metrics' }]);
  assert.throws(() => loadLauncherConfig({ TIMESHARE_METRICS_PORT: '65534' }), /TIMESHARE_METRICS_PORT/);
  assert.match(
    metricsPortsProblem(loadLauncherConfig({ TIMESHARE_METRICS_PORT: '8079' }))!,
    /gives scheduler-b port 8080, the API's/,
  );
});
