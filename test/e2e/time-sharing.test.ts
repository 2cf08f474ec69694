/**
 * Time-sharing: two jobs placed on the same virtual device, whose memory budget cannot hold both
 * jobs' working sets at once. The device lock makes them take turns (acquire → onload → step →
 * offload → release); the timeline shows them alternating with no two holds overlapping, and both
 * reach their target reward.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, waitFor, type Cluster } from '../helpers/cluster.js';

const DEVICE_MEMORY = 48 * 1024 * 1024;
let c: Cluster;
let nodeId: string;

before(async () => {
  // Fresh jobs are planned busy 80% of a step: let two share a device regardless (the mechanism is
  // under test here, not the policy's default bound).
  c = await startCluster({ maxJobsPerDevice: 2, env: { TIMESHARE_MAX_GROUP_LOAD: '2' } });
  await c.startWorker('shared-node', 1, { deviceMemory: DEVICE_MEMORY });
  nodeId = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data[0].id;
});
after(() => c.close());

const job = (name: string, seed: number) => ({
  name,
  workflow: {
    model: { preset: 'tiny' },
    task: { name: 'addition', digits: 1, seed },
    steps: 80,
    promptsPerStep: 32,
    groupSize: 8,
    checkpointEvery: 10,
    evalEvery: 20,
    warmup: { maxSteps: 500, targetAccuracy: 0.5 },
    targetReward: 0.5,
  },
});

test(
  'two jobs on one device alternate under the lock and both reach their target reward',
  { timeout: 300_000 },
  async () => {
    const t = await c.h.createTenant('sharer');
    const ids = [
      (await t.as(c.h.http.post('/v1/jobs')).send(job('share-1', 1)).expect(201)).body.id as string,
      (await t.as(c.h.http.post('/v1/jobs')).send(job('share-2', 2)).expect(201)).body.id as string,
    ];
    // Heartbeats report what the job holding the device has on it.
    const busy = await waitFor('a heartbeat while a job holds the device', async () => {
      const nodes = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data;
      const free = nodes[0].devices[0].freeMemoryBytes as number;
      return free < DEVICE_MEMORY ? free : null;
    });
    assert.ok(busy > 0);
    for (const id of ids) {
      const j = await waitFor(`job ${id}`, async () => {
        const r = await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200);
        return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : null;
      });
      assert.equal(j.status, 'succeeded', j.error);
      assert.deepEqual(j.spec.resources, { devices: 1 });
      const rewards = (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)).body
        .data;
      const last3 = rewards.slice(-3).map((m: { value: number }) => m.value);
      assert.ok(
        last3.reduce((a: number, b: number) => a + b, 0) / 3 >= 0.5,
        `job ${id} reached its target reward`,
      );
      assert.ok(
        rewards.length < 80,
        `stopped early at the target: ${rewards.map((m: { value: number }) => m.value.toFixed(2)).join(' ')}`,
      );
    }

    // Both were placed on the same device.
    const { rows } = await c.h.api.deps.db.pool.query(
      `SELECT job_id, max(peak_bytes)::bigint AS peak FROM stage_profiles WHERE stage = 'train' GROUP BY job_id`,
    );
    assert.equal(rows.length, 2);
    for (const r of rows) {
      assert.ok(
        Number(r.peak) * 2 > DEVICE_MEMORY,
        `two working sets (${r.peak} B each) exceed the device's ${DEVICE_MEMORY} B`,
      );
    }

    const timeline = (await c.h.admin(c.h.http.get(`/v1/nodes/${nodeId}/timeline?limit=10000`)).expect(200))
      .body.data as {
      device: number;
      job: string;
      start: string;
      end: string | null;
    }[];
    const holds = timeline.filter((h) => h.device === 0).sort((a, b) => a.start.localeCompare(b.start));
    assert.deepEqual(new Set(holds.map((h) => h.job)), new Set(ids));
    for (let i = 1; i < holds.length; i++) {
      assert.ok(
        holds[i - 1]!.end !== null && holds[i - 1]!.end! <= holds[i]!.start,
        `holds ${i - 1} and ${i} overlap`,
      );
    }
    // They took turns: the holder changed many times while both were running.
    let switches = 0;
    for (let i = 1; i < holds.length; i++) if (holds[i]!.job !== holds[i - 1]!.job) switches++;
    assert.ok(switches >= 6, `only ${switches} handoffs between the two jobs`);
  },
);
