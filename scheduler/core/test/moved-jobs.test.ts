// A job the round moves sits in the round's model twice: where it runs and where it goes. Only the
// first is a place it can be preempted, moved or claimed from.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PoolModel } from '../cluster.js';
import { defaultPolicy } from '../policy.js';
import { claimableBy, stayingJobsOn, type VictimContext } from '../preempt.js';
import { node, plan, running } from './builders.js';

describe('a job the round moves', () => {
  const model = new PoolModel('default', [node('n1', 2), node('n2', 2)], defaultPolicy);
  const j = running('j', 't', 'n1', [0]);
  const k = running('k', 't', 'n2', [0]);
  model.add('n1', [0], { jobId: 'j', tenantId: 't', plan: j.plan });
  model.add('n2', [0], { jobId: 'k', tenantId: 't', plan: k.plan });
  // j weighed (or decided) as moving to n2's device 1.
  model.add('n2', [1], { jobId: 'j', tenantId: 't', plan: plan() });
  const ctx = (leaving: string[]) =>
    ({
      model,
      policy: defaultPolicy,
      running: new Map([
        ['j', j],
        ['k', k],
      ]),
      leaving: new Set(leaving),
      claimed: new Set(),
    }) as unknown as VictimContext;

  it('is a staying job only on the node it runs on', () => {
    const c = ctx([]);
    assert.deepEqual(
      stayingJobsOn(c, model.slots.get('n1')!).map((r) => r.id),
      ['j'],
    );
    assert.deepEqual(
      stayingJobsOn(c, model.slots.get('n2')!).map((r) => r.id),
      ['k'],
    );
  });

  it('under notice, frees only the devices it leaves, not those it goes to', () => {
    const c = ctx(['j']);
    assert.equal(claimableBy(c, model.slots.get('n1')![0]!, 'j'), true);
    assert.equal(claimableBy(c, model.slots.get('n2')![1]!, 'j'), false);
  });
});
