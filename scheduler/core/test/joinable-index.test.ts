// The round visits only the nodes `joinableNodes` lists when a job looks for a time-share group to
// join; its choice among the first groups found depends on the order of the visit. On random pools
// changed by random adds and removes, every node where `joinGroup` finds a group is listed, and the
// listed nodes come in the order a scan of every open node would reach them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PoolModel } from '../cluster.js';
import { OrderedNodes } from '../open-order.js';
import { defaultPolicy } from '../policy.js';
import { node, plan, seeded } from './builders.js';

describe('joinableNodes', () => {
  it('lists every node with a group to join, in open-node order', () => {
    const { rand, pick } = seeded(11);
    let found = 0;
    for (let trial = 0; trial < 60; trial++) {
      const policy = { ...defaultPolicy, maxJobsPerDevice: 2 + pick(2) };
      const nodes = Array.from({ length: 6 }, (_, i) => node(`n${i}`, 8));
      const model = new PoolModel('default', nodes, policy);
      const jobs = new Map<string, string>();
      for (let op = 0; op < 80; op++) {
        const width = 1 + pick(4);
        const joiner = plan({ devicesMin: width, devicesMax: width, busyFraction: 0.05 });
        const scan = [...model.openNodes].filter((n) => model.joinGroup(n, joiner, width));
        const listed = model.joinableNodes(width).filter((n) => model.joinGroup(n, joiner, width));
        assert.deepEqual(listed, scan, `trial ${trial}, op ${op}`);
        found += scan.length;
        if (jobs.size > 0 && rand() < 0.3) {
          const id = [...jobs.keys()][pick(jobs.size)]!;
          model.remove(jobs.get(id)!, id);
          jobs.delete(id);
          continue;
        }
        const nodeId = `n${pick(6)}`;
        const p = plan({ devicesMin: width, devicesMax: width, busyFraction: 0.1 + rand() * 0.3 });
        const joined = rand() < 0.5 ? model.joinGroup(nodeId, p, width) : null;
        const start = pick(8 - width + 1);
        const devices = joined?.devices ?? Array.from({ length: width }, (_, k) => start + k);
        if (model.slotsOf(nodeId, devices).some((s) => s.occupants.length >= policy.maxJobsPerDevice))
          continue;
        const id = `j${trial}-${op}`;
        model.add(nodeId, devices, { jobId: id, tenantId: 't', plan: p });
        jobs.set(id, nodeId);
      }
    }
    assert.ok(found > 1000, `groups found often enough to compare (${found})`);
  });
});

describe('OrderedNodes', () => {
  it('keeps nodes in sequence order through inserts, re-inserts and deletes', () => {
    const list = new OrderedNodes();
    list.insert('c', 5);
    list.insert('a', 1);
    list.insert('b', 3);
    list.insert('a', 9);
    list.delete('b');
    list.delete('missing');
    list.insert('d', 2);
    assert.deepEqual(list.nodes, ['d', 'c', 'a']);
    assert.equal(list.size, 3);
  });
});
