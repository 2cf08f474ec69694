/**
 * Scale to zero and back, with real processes: a pool with no nodes keeps its jobs queued (reason
 * `capacity`) and reports the devices they want, on the API's capacity URL (KEDA's metrics-api
 * shape) and the scheduler's gauges; a node registers and the jobs run; that node is scaled in
 * (SIGTERM: drain), its jobs checkpoint and go back to the queue, the pool wants them again, and
 * they resume from their checkpoints on the next node; with nothing left, the pool wants zero.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkpointSteps,
  eventsOf,
  jobOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';
import { freePort } from '../helpers/processes.js';
import type { TestTenant } from '../helpers/api-harness.js';

const POOL = 'elastic';
let c: Cluster;
let t: TestTenant;
let metricsPort: number;

before(async () => {
  metricsPort = await freePort();
  c = await startCluster({ schedulerEnv: { TIMESHARE_METRICS_PORT: String(metricsPort) } });
  t = await c.h.createTenant('scaler');
});
after(() => c.close());

interface Capacity {
  pool: string;
  wantedDevices: number;
  queuedDevices: number;
  busyDevices: number;
  idleDevices: number;
  devices: number;
  queuedJobs: number;
  runningJobs: number;
  updatedAt: string | null;
}

const capacity = async (): Promise<Capacity> =>
  (await c.h.admin(c.h.http.get(`/v1/pools/${POOL}/capacity`)).expect(200)).body;

/** The scheduler's gauge for this pool, as Prometheus would scrape it. */
async function gauge(name: string): Promise<number | null> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const m = new RegExp(`^${name}\\{pool="${POOL}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

const waitCapacity = (what: string, ok: (c: Capacity) => boolean) =>
  waitFor(what, async () => {
    const cap = await capacity();
    return ok(cap) ? cap : null;
  });

test(
  'a pool scales from zero nodes and back, and a scaled-in node loses no work',
  { timeout: 300_000 },
  async () => {
    const fresh = await capacity();
    assert.equal(fresh.wantedDevices, 0, 'a pool nobody has seen reads as zeros');
    assert.equal(fresh.updatedAt, null);

    const ids: string[] = [];
    for (const name of ['elastic-1', 'elastic-2']) {
      const job = steadyJob(name, 30, { checkpointEvery: 4 });
      const res = await t
        .as(c.h.http.post('/v1/jobs'))
        .send({ ...job, pool: POOL })
        .expect(201);
      ids.push(res.body.id);
    }

    // 1. No node: both jobs wait for capacity, and the pool asks for their devices.
    const empty = await waitCapacity('demand for the queued jobs', (x) => x.queuedJobs === 2);
    assert.deepEqual(
      {
        wanted: empty.wantedDevices,
        queued: empty.queuedDevices,
        devices: empty.devices,
        idle: empty.idleDevices,
      },
      { wanted: 2, queued: 2, devices: 0, idle: 0 },
    );
    assert.ok(empty.updatedAt);
    for (const id of ids) {
      const j = await jobOf(c, t, id);
      assert.equal(j.status, 'queued');
      assert.equal(j.waitReason, 'capacity');
    }
    await waitFor(
      'the wanted-devices gauge',
      async () => (await gauge('timeshare_pool_wanted_devices')) === 2,
    );

    // 2. A node registers (the autoscaler brought one up): the jobs run on it.
    await c.startWorker('elastic-a', 2, { pool: POOL });
    for (const id of ids) await waitForStatus(c, t, id, ['running']);
    // The leader counts what its rounds placed and times each round by phase.
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const value = (series: string) => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    assert.ok(value('timeshare_scheduler_placements_total') >= 2, 'both placements counted');
    for (const phase of ['read', 'schedule', 'apply', 'publish', 'total'])
      assert.ok(value(`timeshare_scheduler_round_duration_seconds_count\\{phase="${phase}"\\}`) > 0, phase);
    const busy = await waitCapacity('both jobs on the node', (x) => x.runningJobs === 2);
    assert.deepEqual(
      {
        wanted: busy.wantedDevices,
        queued: busy.queuedDevices,
        busy: busy.busyDevices,
        idle: busy.idleDevices,
      },
      { wanted: 2, queued: 0, busy: 2, idle: 0 },
    );
    for (const id of ids)
      await waitFor('a checkpoint', async () => (await checkpointSteps(c, t, id)).length > 0);

    // 3. Scaled in: SIGTERM drains the node; every job checkpoints and goes back to the queue.
    const a = c.workers.get('elastic-a')!;
    assert.equal(await a.kill('SIGTERM'), 0, a.output());
    const saved = new Map<string, number>();
    for (const id of ids) {
      const events = await eventsOf(c, t, id);
      assert.ok(
        events.some((e) => e.type === 'job.queued' && e.data.reason === 'drained'),
        'requeued as drained',
      );
      saved.set(id, Math.max(...(await checkpointSteps(c, t, id))));
    }
    const drained = await waitCapacity('demand again', (x) => x.queuedJobs === 2 && x.runningJobs === 0);
    assert.equal(drained.wantedDevices, 2);
    assert.equal(drained.devices, 0, 'a draining node offers nothing');

    // 4. The next node takes them up from their checkpoints.
    await c.startWorker('elastic-b', 2, { pool: POOL });
    for (const id of ids) {
      const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
      assert.equal(job.status, 'succeeded', job.error ?? '');
      const runs = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.running');
      assert.equal(runs.at(-1)!.data.resumedFromStep, saved.get(id));
    }

    // 5. Nothing left: the pool wants nothing, and its node stands idle.
    const done = await waitCapacity('no demand', (x) => x.wantedDevices === 0);
    assert.equal(done.idleDevices, 2);
    await waitFor('the gauge at zero', async () => (await gauge('timeshare_pool_wanted_devices')) === 0);
  },
);
