// Workload sources: files are checked as read, the replay skips itself without the trace, a seed
// reproduces a workload exactly, a workload without quotas never makes a job wait on one, and the
// planner's prior prices a simulated device as fast as the workloads' jobs run.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { defaultPolicy } from '../../core/policy.js';
import { simulate } from '../engine.js';
import { planJob } from '../../planner/plan-job.js';
import { SIM_DEVICE_THREADS, stepFigures, type SimWorkload } from '../model.js';
import { specWorkload } from '../snapshot.js';
import { physicsWorkload } from '../workloads/physics.js';
import { fileWorkload } from '../workloads/file.js';
import { phillyWorkload } from '../workloads/philly.js';
import { syntheticWorkload } from '../workloads/synthetic.js';

describe('simulator workloads', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sim-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a CSV of jobs into RL jobs on the tenants it names', () => {
    const file = path.join(dir, 'w.csv');
    writeFileSync(file, 'id,tenant,arrival,devices,seconds\nj1,a,0,1,3600\nj2,b,60,3,7200\n');
    const w = fileWorkload(file, 1);
    assert.deepEqual(
      w.tenants.map((t) => t.id),
      ['a', 'b'],
    );
    assert.deepEqual(
      w.jobs.map((j) => [j.id, j.devices, j.arrival]),
      [
        ['j1', 1, 0],
        ['j2', 4, 60],
      ],
    );
    writeFileSync(file, 'id,tenant,arrival,devices\nj1,a,0,1\n');
    assert.throws(() => fileWorkload(file, 1), /missing column seconds/);
  });

  it("prices a new job's step, on the planner's prior, within 1.5× of what it runs (geometric mean)", () => {
    // At one thread a device the prior said 273–430× (weeks for jobs that took hours).
    const workloads: SimWorkload[] = [
      syntheticWorkload({ seed: 2 }),
      physicsWorkload(0.3, { recurring: false }),
    ];
    const philly = phillyWorkload({ seed: 2 });
    if (philly) workloads.push(philly);
    for (const w of workloads) {
      const logs = w.jobs.map((s) => {
        const plan = planJob({
          workload: specWorkload(s, true),
          devices: s.devices,
          maxDevices: s.devices,
          memoryPerDeviceBytes: s.deviceBytes,
          deviceMemoryBytes: w.cluster.deviceMemoryBytes,
          threadsPerDevice: SIM_DEVICE_THREADS,
          profile: null,
        });
        return Math.log(plan.stepSeconds / stepFigures(s.shape).step);
      });
      const ratio = Math.exp(logs.reduce((a, x) => a + x, 0) / logs.length);
      assert.ok(ratio > 1 / 1.5 && ratio < 1.5, `${w.name}: prior ÷ drawn step ${ratio.toFixed(2)}`);
    }
  });

  it('skips the Philly replay when the trace is absent', () => {
    assert.equal(phillyWorkload({ seed: 1, path: path.join(dir, 'absent.csv') }), null);
  });

  it('reproduces the synthetic workload from its seed, and another seed gives another', () => {
    const a = JSON.stringify(syntheticWorkload({ seed: 5 }));
    assert.equal(JSON.stringify(syntheticWorkload({ seed: 5 })), a);
    assert.notEqual(JSON.stringify(syntheticWorkload({ seed: 6 })), a);
  });

  it('gives no quota that binds: time-shared jobs of one tenant are not held to one per device', () => {
    // One tenant's jobs, each idle half of every step, on one node: with time-sharing they pair up
    // and hold more device slots than the node has devices; a quota of the cluster's size stopped that.
    const w = syntheticWorkload({ seed: 3, nodes: 1, arrivalHours: 1, overload: 2 });
    for (const j of w.jobs) {
      j.tenant = 'lab-a';
      j.recurring = true;
      j.shape = { ...j.shape, rewardSeconds: j.shape.rewardSeconds + stepFigures(j.shape).held };
    }
    let quotaWaits = 0;
    let maxSlots = 0;
    simulate(w, defaultPolicy, {
      seed: 3,
      observe: (snapshot, decisions) => {
        quotaWaits += decisions.queue.filter((q) => q.waitReason === 'quota').length;
        const slots = [...snapshot.running, ...decisions.place].reduce((n, j) => n + j.devices.length, 0);
        maxSlots = Math.max(maxSlots, slots);
      },
    });
    assert.ok(maxSlots > 8, `one tenant held at most ${maxSlots} device slots on 8 devices`);
    assert.equal(quotaWaits, 0);
  });
});
