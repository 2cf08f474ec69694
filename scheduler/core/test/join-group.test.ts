// The shared placement's shortcut must choose what `fitOnNode` would: on random pools changed by
// random adds and removes (jobs spanning several devices, up to 3 jobs per device, random loads),
// with the node's whole groups kept across changes, every time `fitOnNode` gives a time-share group
// `joinGroup` gives the same devices at the same cost, and when `fitOnNode` finds nothing neither
// does `joinGroup`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PoolModel } from '../cluster.js';
import { defaultPolicy } from '../policy.js';
import type { JobPlan } from '../types.js';
import { node, plan, seeded } from './builders.js';

describe('joinGroup', () => {
  it('agrees with fitOnNode whenever no free devices are used', () => {
    const { rand, pick } = seeded(7);
    let shared = 0;
    let none = 0;
    for (let trial = 0; trial < 200; trial++) {
      const policy = { ...defaultPolicy, maxJobsPerDevice: 1 + pick(3), maxGroupLoad: 1 + rand() };
      const model = new PoolModel('default', [node('n', 8)], policy);
      const jobs = new Map<string, { devices: number[]; plan: JobPlan }>();
      const check = () => {
        const need = 1 + pick(4);
        const wanted = plan({ devicesMin: need, devicesMax: need, busyFraction: 0.2 + rand() * 0.6 });
        const fit = model.fitOnNode('n', wanted, need);
        const join = model.joinGroup('n', wanted, need);
        if (fit && fit.shared === 0) return; // free devices: exclusiveFit's case, not joinGroup's
        assert.deepEqual(join, fit, `trial ${trial}`);
        if (fit) shared++;
        else none++;
      };
      for (let op = 0; op < 30; op++) {
        check();
        if (jobs.size > 0 && rand() < 0.25) {
          const id = [...jobs.keys()][pick(jobs.size)]!;
          model.remove('n', id);
          jobs.delete(id);
          continue;
        }
        // Half the time a job joins a whole group the way a round places one; else anywhere it may.
        const width = 1 + pick(4);
        const p = plan({ devicesMin: width, devicesMax: width, busyFraction: 0.2 + rand() * 0.6 });
        const joined = rand() < 0.5 ? model.joinGroup('n', p, width) : null;
        const start = pick(8 - width + 1);
        const devices = joined?.devices ?? Array.from({ length: width }, (_, k) => start + k);
        if (model.slotsOf('n', devices).some((s) => s.occupants.length >= policy.maxJobsPerDevice)) continue;
        const id = `j${trial}-${op}`;
        model.add('n', devices, { jobId: id, tenantId: 't', plan: p });
        jobs.set(id, { devices, plan: p });
      }
    }
    assert.ok(shared > 100 && none > 100, `both outcomes compared often (${shared} shared, ${none} none)`);
  });
});
