import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkerMetrics } from '../../../worker-node/metrics.js';
import { serveMetrics } from '../serve.js';
import { sample } from './exposition.js';
import { loadSchedulerConfig } from '../../../scheduler/config.js';
import { loadWorkerConfig } from '../../../worker-node/config.js';

const profile = (stage: string, seconds: number, tokens: number, computeSeconds: number | null = null) => ({
  stage,
  step: 1,
  seconds,
  tokens,
  batch: 8,
  devices: 1,
  peakBytes: 0,
  onloadSeconds: 0.01,
  offloadSeconds: 0.02,
  computeSeconds,
  occupancy: null,
  partialTail: null,
});

test('the daemon counts what its job processes report, labelled by pool and stage only', async () => {
  const m = createWorkerMetrics('cpu');
  m.countRunning(() => 3);
  m.countOutbox(() => 5);
  m.dropped('checkpoint');
  m.observe({
    t: 'report',
    metrics: [],
    profiles: [profile('generate', 0.5, 1000, 0.4), profile('checkpoint', 0.13, 0)],
    deviceSeconds: 0.63,
    lockWaits: [{ stage: 'generate', seconds: 0.2 }],
  });
  m.observe({ t: 'checkpoint', step: 1, sizeBytes: 4096, sha256: 'a'.repeat(64), storageKey: 'k', meta: {} });
  m.observe({ t: 'finished', outcome: 'succeeded', error: null });
  const text = await m.registry.metrics();
  const gen = { pool: 'cpu', stage: 'generate' };
  assert.equal(sample(text, 'timeshare_engine_tokens_total', gen), 1000);
  assert.equal(sample(text, 'timeshare_device_lock_wait_seconds_sum', gen), 0.2);
  assert.equal(
    sample(text, 'timeshare_device_lock_hold_seconds_count', { pool: 'cpu', stage: 'checkpoint' }),
    1,
  );
  assert.equal(sample(text, 'timeshare_engine_step_seconds_sum', gen)?.toFixed(3), '0.470');
  assert.equal(
    sample(text, 'timeshare_engine_step_seconds_count', { pool: 'cpu', stage: 'checkpoint' }),
    null,
  );
  assert.equal(
    sample(text, 'timeshare_checkpoint_duration_seconds_sum', { pool: 'cpu' })?.toFixed(3),
    '0.100',
  );
  assert.equal(sample(text, 'timeshare_checkpoint_written_bytes_total', { pool: 'cpu' }), 4096);
  assert.equal(sample(text, 'timeshare_device_busy_seconds_total', { pool: 'cpu' }), 0.63);
  // generate: 0.4 s computing, 0.03 s switching, 0.07 s idle-held; checkpoint (no engine profile):
  // its 0.1 s run counts as running.
  const state = (s: string) => sample(text, 'timeshare_device_seconds_total', { pool: 'cpu', state: s });
  assert.equal(state('running')?.toFixed(3), '0.500');
  assert.equal(state('switching')?.toFixed(3), '0.060');
  assert.equal(state('idle')?.toFixed(3), '0.070');
  assert.equal(sample(text, 'timeshare_worker_jobs_running', { pool: 'cpu' }), 3);
  assert.equal(sample(text, 'timeshare_worker_job_runs_total', { pool: 'cpu', outcome: 'succeeded' }), 1);
  assert.equal(sample(text, 'timeshare_worker_outbox_reports', { pool: 'cpu' }), 5);
  assert.equal(
    sample(text, 'timeshare_worker_reports_dropped_total', { pool: 'cpu', kind: 'checkpoint' }),
    1,
  );
  assert.doesNotMatch(text, /job_?id=/i);
});

test('the metrics endpoint serves the registry, 404s elsewhere, and is off at port 0', async () => {
  const m = createWorkerMetrics('cpu');
  assert.equal(await serveMetrics(m.registry, 0), null);
  // An ephemeral port the OS picks: listen(0) is not available through the config (0 = off).
  const net = await import('node:net');
  const free = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  const server = await serveMetrics(m.registry, free, '127.0.0.1');
  assert.ok(server);
  try {
    const ok = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /^# TYPE timeshare_worker_process_cpu_seconds_total counter$/m);
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/`)).status, 404);
  } finally {
    await server.close();
  }
});

test('the endpoint listens on TIMESHARE_METRICS_HOST, every interface unless told', () => {
  const loaders = [
    (env: NodeJS.ProcessEnv) => loadSchedulerConfig(env),
    (env: NodeJS.ProcessEnv) => loadWorkerConfig([], { TIMESHARE_NODE_KEY: 'tsn_test', ...env }),
  ];
  for (const load of loaders) {
    const host = (env: NodeJS.ProcessEnv) => load(env).TIMESHARE_METRICS_HOST;
    assert.equal(host({}), '0.0.0.0', 'where the images and the chart have Prometheus scrape it');
    assert.equal(host({ TIMESHARE_METRICS_HOST: '127.0.0.1' }), '127.0.0.1');
    assert.throws(() => host({ TIMESHARE_METRICS_HOST: ' ' }), /TIMESHARE_METRICS_HOST/);
  }
});
