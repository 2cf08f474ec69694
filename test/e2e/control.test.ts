/**
 * Control of running jobs: cancel and preempt are honoured within 5 s; a paused job checkpoints,
 * waits paused and resumes from its checkpoint; SIGTERM drains a daemon
 * (jobs checkpoint and return to the queue); a crashed job process is retried from its checkpoint
 * until its attempts run out, with the cause recorded.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkpointStepBefore,
  checkpointSteps,
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';
import type { TestTenant } from '../helpers/api-harness.js';
import { freePort } from '../helpers/processes.js';

let c: Cluster;
let t: TestTenant;
let nodeId: string;
let metricsPort: number;

before(async () => {
  // The scheduler's metrics count its rounds (what the pause test waits on).
  metricsPort = await freePort();
  c = await startCluster({
    maxJobsPerDevice: 4,
    schedulerEnv: { TIMESHARE_METRICS_PORT: String(metricsPort) },
  });
  await c.startWorker('ctl-node', 1);
  nodeId = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data[0].id;
  t = await c.h.createTenant('controller');
});
after(() => c.close());

interface Hold {
  job: string;
  holder: string;
  start: string;
  end: string | null;
}

async function holdsOf(jobId: string): Promise<Hold[]> {
  const r = await c.h.admin(c.h.http.get(`/v1/nodes/${nodeId}/timeline?limit=10000`)).expect(200);
  return (r.body.data as Hold[]).filter((h) => h.job === jobId);
}

async function submitRunning(name: string, steps: number, extra: Record<string, unknown> = {}) {
  const id = (
    await t
      .as(c.h.http.post('/v1/jobs'))
      .send(steadyJob(name, steps, extra))
      .expect(201)
  ).body.id as string;
  await waitFor('a few steps', async () => {
    const m = await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200);
    return m.body.data.length >= 3;
  });
  return id;
}

/** Rounds the scheduler has run to their end so far. */
async function roundsRun(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const m = /^timeshare_scheduler_round_duration_seconds_count\{phase="total"\} (\d+)$/m.exec(text);
  assert.ok(m, text);
  return Number(m[1]);
}

/** Time from `since` until the job's last device hold ended (it holds nothing after that). */
async function releasedWithin(jobId: string, since: number): Promise<number> {
  return waitFor('the job to release its device', async () => {
    const holds = await holdsOf(jobId);
    if (!holds.length || holds.some((h) => h.end === null)) return null;
    await new Promise((r) => setTimeout(r, 1000));
    const again = await holdsOf(jobId);
    if (again.length !== holds.length) return null;
    const lastEnd = Math.max(...again.map((h) => Date.parse(h.end!)));
    return Math.max(0, lastEnd - since);
  });
}

test('cancel stops a running job within 5 s', { timeout: 120_000 }, async () => {
  const id = await submitRunning('to-cancel', 400);
  const at = Date.now();
  const res = await t.as(c.h.http.post(`/v1/jobs/${id}/cancel`)).expect(200);
  assert.equal(res.body.status, 'cancelled');
  const ms = await releasedWithin(id, at);
  assert.ok(ms <= 5000, `released ${ms} ms after cancel`);
  const usage = await t.as(c.h.http.get('/v1/usage')).expect(200);
  assert.equal(usage.body.runningJobs, 0);
});

test(
  'pause: a running job checkpoints and waits in the queue, paused; resumed, it goes on from its checkpoint to success',
  { timeout: 180_000 },
  async () => {
    const id = await submitRunning('to-pause', 40);
    const paused = await t.as(c.h.http.post(`/v1/jobs/${id}/pause`)).expect(200);
    assert.ok(paused.body.pausedAt);
    await waitFor('the paused job back in the queue', async () => {
      const ev = await eventsOf(c, t, id);
      return ev.some((e) => e.type === 'job.queued' && e.data.reason === 'preempted') ? true : null;
    });
    const noticed = (await eventsOf(c, t, id)).find((e) => e.type === 'job.preempting');
    assert.equal(noticed?.data.reason, 'pause');
    // Three rounds leave it where it is, the device free: three that began after it was back (the
    // one running then may have read the queue before), counted as they end.
    const roundsBefore = await roundsRun();
    await waitFor('three more rounds', async () => (await roundsRun()) >= roundsBefore + 4);
    const waiting = (await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
    assert.equal(waiting.status, 'queued');
    assert.equal(waiting.waitReason, 'paused');
    assert.equal(waiting.queuePosition, null);
    const before = await eventsOf(c, t, id);
    assert.equal(before.filter((e) => e.type === 'job.placed').length, 1, 'placed once, not again');
    const savedAtPause = checkpointStepBefore(before, 'job.preempted');

    await t.as(c.h.http.post(`/v1/jobs/${id}/resume`)).expect(200);
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    assert.equal(job.countedAttempts, 1, 'the pause used none of its attempts');
    const all = await eventsOf(c, t, id);
    const runs = all.filter((e) => e.type === 'job.running');
    assert.equal(runs.length, 2, all.map((e) => e.type).join(', '));
    assert.equal(runs[1]!.data.resumedFromStep, savedAtPause, JSON.stringify(runs));
    const order = all.map((e) => e.type);
    assert.ok(order.indexOf('job.paused') < order.indexOf('job.preempting'), order.join(', '));
    assert.ok(order.indexOf('job.resumed') < order.lastIndexOf('job.placed'), order.join(', '));
    const rewards = (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)).body
      .data;
    assert.equal(rewards.length, 40);
  },
);

test(
  'preempt checkpoints, releases within 5 s, requeues, and the job resumes to success',
  { timeout: 180_000 },
  async () => {
    const id = await submitRunning('to-preempt', 40);
    const at = Date.now();
    await c.h.admin(c.h.http.post(`/v1/jobs/${id}/preempt`)).expect(202);
    const preemptedAt = await waitFor('job.preempted', async () => {
      const ev = await eventsOf(c, t, id);
      return ev.find((e) => e.type === 'job.preempted') ? Date.now() : null;
    });
    assert.ok(preemptedAt - at <= 5000, `preempted ${preemptedAt - at} ms after the request`);
    const events = await eventsOf(c, t, id);
    const i = events.findIndex((e) => e.type === 'job.preempted');
    const order = events.map((e) => e.type).join(', ');
    assert.equal(events[i + 1]?.type, 'job.queued', order);
    assert.equal(events[i + 1]!.data.reason, 'preempted');
    const savedAtPreempt = checkpointStepBefore(events, 'job.preempted');
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    const all = await eventsOf(c, t, id);
    const runs = all.filter((e) => e.type === 'job.running');
    assert.equal(runs.length, 2, all.map((e) => e.type).join(', '));
    assert.equal(runs[1]!.data.resumedFromStep, savedAtPreempt, JSON.stringify(runs));
    const rewards = (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)).body
      .data;
    assert.equal(rewards.length, 40, JSON.stringify(rewards.map((m: { step: number }) => m.step)));
  },
);

test(
  'a crashed job process is retried from its checkpoint; the last attempt fails with the cause',
  { timeout: 180_000 },
  async () => {
    const killRunner = async (id: string) => {
      const holder = await waitFor('a hold', async () => (await holdsOf(id)).at(-1)?.holder);
      process.kill(Number(holder.split(':').at(-1)), 'SIGKILL');
    };
    const id = await submitRunning('crashy-1', 40, {});
    await waitFor('a checkpoint', async () => (await checkpointSteps(c, t, id)).length > 0);
    await killRunner(id);
    const requeued = await waitFor('crash requeue', async () =>
      (await eventsOf(c, t, id)).find((e) => e.type === 'job.queued' && e.data.reason === 'crashed'),
    );
    assert.match(String(requeued.data.error), /job process exited with SIGKILL/);
    // Backed off before its next attempt, and its tenant is told why.
    const waiting = (await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
    if (waiting.status === 'queued') assert.equal(waiting.waitReason, 'crash_loop');
    // While it backs off (5 s), a job with one attempt is crashed the same way beside it.
    const once = (
      await t
        .as(c.h.http.post('/v1/jobs'))
        .send({ ...steadyJob('crashy-2', 400), maxAttempts: 1 })
        .expect(201)
    ).body.id as string;
    await waitForStatus(c, t, once, ['running']);
    await waitFor(
      'a step',
      async () =>
        (await t.as(c.h.http.get(`/v1/jobs/${once}/metrics?name=reward_mean`)).expect(200)).body.data.length >
        0,
    );
    await killRunner(once);
    const failed = await waitForStatus(c, t, once, ['failed', 'succeeded']);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error ?? '', /job process exited with SIGKILL/);

    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    assert.equal(job.attempts, 2);
    const usage = await t.as(c.h.http.get('/v1/usage')).expect(200);
    assert.equal(usage.body.activeJobs, 0);
  },
);

test(
  'SIGTERM drains the daemon: the job checkpoints, returns to the queue and finishes elsewhere',
  { timeout: 180_000 },
  async () => {
    const id = await submitRunning('drained', 40);
    const daemon = c.workers.get('ctl-node')!;
    const exited = daemon.kill('SIGTERM');
    // The node it finishes on starts while this one drains (it registers once the signal is sent).
    const elsewhere = c.startWorker('ctl-node-2', 1);
    elsewhere.catch(() => undefined); // awaited below
    const code = await exited;
    assert.equal(code, 0, daemon.output());
    const nodes = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data;
    assert.equal(nodes.find((n: { name: string }) => n.name === 'ctl-node')?.status, 'draining');
    const events = await eventsOf(c, t, id);
    const drained = events.findIndex((e) => e.type === 'job.queued' && e.data.reason === 'drained');
    assert.ok(drained >= 0, 'requeued as drained');
    // Its last checkpoint before it was requeued (the other node may be running it by now).
    const saved = Math.max(
      ...events
        .slice(0, drained)
        .filter((e) => e.type === 'job.checkpoint')
        .map((e) => e.data.step as number),
    );
    assert.ok(saved >= 3);
    await elsewhere;
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    const runs = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.running');
    assert.equal(runs.at(-1)!.data.resumedFromStep, saved);
  },
);
