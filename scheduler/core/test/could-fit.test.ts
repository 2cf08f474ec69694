// The victim search's pruning bound must never rule out a node where the job would fit: on random
// pools (up to 3 jobs per device, jobs spanning several devices, random loads and victims), every
// node `fitOnNode` accepts, `couldFit` accepts too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PoolModel } from '../cluster.js';
import { defaultPolicy } from '../policy.js';
import { couldFit } from '../preempt.js';
import { node, plan, seeded } from './builders.js';

describe('couldFit', () => {
  it('is a necessary condition for fitOnNode', () => {
    const { rand, pick } = seeded(11);
    let fits = 0;
    for (let trial = 0; trial < 400; trial++) {
      const policy = { ...defaultPolicy, maxJobsPerDevice: 1 + pick(3), maxGroupLoad: 1 + rand() };
      const model = new PoolModel('default', [node('n', 8)], policy);
      const ids: string[] = [];
      for (let j = 0; j < 10; j++) {
        const width = 1 + pick(4);
        const start = pick(8 - width + 1);
        const devices = Array.from({ length: width }, (_, k) => start + k);
        const slots = model.slotsOf('n', devices);
        if (slots.some((s) => s.occupants.length >= policy.maxJobsPerDevice)) continue;
        const id = `j${j}`;
        ids.push(id);
        const p = plan({ devicesMin: width, devicesMax: width, busyFraction: 0.2 + rand() * 0.6 });
        model.add('n', devices, { jobId: id, tenantId: 't', plan: p });
      }
      const gone = new Set(ids.filter(() => rand() < 0.4));
      const need = 1 + pick(8);
      const wanted = plan({ devicesMin: need, devicesMax: need, busyFraction: 0.2 + rand() * 0.6 });
      const fit = model.fitOnNode('n', wanted, need, gone);
      const bound = couldFit(model.slots.get('n')!, wanted, need, policy, (_s, id) => gone.has(id));
      if (fit) {
        fits++;
        assert.ok(bound, `trial ${trial}: fits, but the bound ruled it out`);
      }
    }
    assert.ok(fits > 50, `enough trials that fit to mean something (${fits})`);
  });
});
