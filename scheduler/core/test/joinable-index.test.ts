// The round visits only the nodes `joinableNodes` lists when a job looks for a time-share group to
// join; its choice among the first groups found depends on the order of the visit. On random pools
// changed by random adds and removes, every node where `joinGroup` finds a group is listed, and the
// listed nodes come in the order a scan of every open node would reach them. The cheapest group on
// any node (what compaction moves a job to) is the one a scan of every node finds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PoolModel } from '../cluster.js';
import { OrderedNodes } from '../open-order.js';
import { SeqTree } from '../seq-tree.js';
import { defaultPolicy } from '../policy.js';
import type { JobPlan, Policy } from '../types.js';
import { node, plan, seeded } from './builders.js';

/**
 * One random change to a pool of `nodes` nodes: a job in `jobs` leaves (`leave` of the time), or job
 * `id` with plan `p` arrives on a random node, joining a group there as a round would half the time.
 */
function change(
  model: PoolModel,
  policy: Policy,
  rng: ReturnType<typeof seeded>,
  jobs: [string, string][],
  nodes: number,
  p: JobPlan,
  id: string,
  leave: number,
): void {
  const { rand, pick } = rng;
  if (jobs.length > 0 && rand() < leave) {
    const [nodeId, gone] = jobs.splice(pick(jobs.length), 1)[0]!;
    model.remove(nodeId, gone);
    return;
  }
  const width = p.devicesMin;
  const nodeId = `n${pick(nodes)}`;
  const joined = rand() < 0.5 ? model.joinGroup(nodeId, p, width) : null;
  const start = pick(8 - width + 1);
  const devices = joined?.devices ?? Array.from({ length: width }, (_, k) => start + k);
  if (model.slotsOf(nodeId, devices).some((s) => s.occupants.length >= policy.maxJobsPerDevice)) return;
  model.add(nodeId, devices, { jobId: id, tenantId: 't', plan: p });
  jobs.push([nodeId, id]);
}

describe('joinableNodes', () => {
  it('lists every node with a group to join, in open-node order', () => {
    const rng = seeded(11);
    const { rand, pick } = rng;
    let found = 0;
    for (let trial = 0; trial < 60; trial++) {
      // A group-load bound the jobs reach, so some groups are too busy for the one looking.
      const policy = { ...defaultPolicy, maxJobsPerDevice: 2 + pick(2), maxGroupLoad: 0.8 + rand() * 0.8 };
      const nodes = Array.from({ length: 6 }, (_, i) => node(`n${i}`, 8));
      const model = new PoolModel('default', nodes, policy);
      const jobs: [string, string][] = [];
      for (let op = 0; op < 80; op++) {
        const width = 1 + pick(4);
        // Light or heavy: a heavy one finds some groups too busy, which the visit passes over.
        const joiner = plan({
          devicesMin: width,
          devicesMax: width,
          busyFraction: rand() < 0.5 ? 0.05 : 0.5 + rand(),
        });
        const scan = [...model.openNodes].filter((n) => model.joinGroup(n, joiner, width));
        const listed = model.joinableNodes(width).filter((n) => model.joinGroup(n, joiner, width));
        assert.deepEqual(listed, scan, `trial ${trial}, op ${op}`);
        // What the round visits: the listed nodes whose groups are not all too busy for the job.
        const visited: string[] = [];
        for (
          let at = model.nextJoinable(width, 0, joiner);
          at >= 0;
          at = model.nextJoinable(width, at + 1, joiner)
        )
          visited.push(model.joinableAt(width, at));
        assert.deepEqual(
          visited.filter((n) => model.joinGroup(n, joiner, width)),
          scan,
          `trial ${trial}, op ${op}`,
        );
        found += scan.length;
        const p = plan({ devicesMin: width, devicesMax: width, busyFraction: 0.1 + rand() * 0.3 });
        change(model, policy, rng, jobs, 6, p, `j${trial}-${op}`, 0.3);
      }
    }
    assert.ok(found > 1000, `groups found often enough to compare (${found})`);
  });
});

describe('cheapestJoin', () => {
  it('finds the group a scan of every node finds: least cost, first in pool order on a tie', () => {
    const rng = seeded(5);
    const { pick } = rng;
    let compared = 0;
    for (let trial = 0; trial < 60; trial++) {
      const policy = { ...defaultPolicy, maxJobsPerDevice: 2 + pick(2) };
      const nodes = Array.from({ length: 8 }, (_, i) => node(`n${i}`, 8));
      const model = new PoolModel('default', nodes, policy);
      const jobs: [string, string][] = [];
      // Jobs of a few shapes, so equal loads (ties) are common, as on a real pool, and sums in another
      // order differ in their last bits (0.1 + 0.2 + 0.3 is not 0.3 + 0.2 + 0.1).
      const shapes = [0.1, 0.2, 0.3];
      for (let op = 0; op < 120; op++) {
        const width = 1 + pick(2);
        const wanted = plan({ devicesMin: width, devicesMax: width, busyFraction: shapes[pick(3)]! });
        const skip = `n${pick(8)}`;
        let cost = Infinity;
        let cheapest = '';
        for (const n of model.openNodes) {
          const g = n === skip ? null : model.joinGroup(n, wanted, width);
          if (g && (g.cost < cost || (g.cost === cost && model.rank(n) < model.rank(cheapest))))
            [cost, cheapest] = [g.cost, n];
        }
        const found = model.cheapestJoin(wanted, width, skip);
        assert.equal(found?.nodeId ?? '', cheapest, `trial ${trial}, op ${op}`);
        if (found) compared++;
        const p = plan({ devicesMin: width, devicesMax: width, busyFraction: shapes[pick(3)]! });
        change(model, policy, rng, jobs, 8, p, `j${trial}-${op}`, 0.2);
      }
    }
    assert.ok(compared > 1000, `groups found often enough to compare (${compared})`);
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

  it('orders equal numbers by the tie-break given', () => {
    const list = new OrderedNodes();
    list.insert('c', 1, 2);
    list.insert('a', 1, 0);
    list.insert('b', 1, 1);
    list.insert('a', 0.5, 0);
    assert.deepEqual(list.nodes, ['a', 'b', 'c']);
    assert.deepEqual(list.keys, [0.5, 1, 1]);
  });
});

describe('SeqTree', () => {
  it('finds the next node in sequence order whose load passes, past those that do not', () => {
    const tree = new SeqTree();
    // Grown past its first size as sequence numbers come.
    const loads = [0.9, 1.5, 2.0, 0.4, 1.9, 0.7, 2.3, 0.1, 1.2];
    loads.forEach((l, seq) => tree.set(seq * 3, `n${seq}`, l));
    tree.clear(9); // n3 (0.4) leaves
    const visit = (busy: number) => {
      const out: string[] = [];
      for (let at = tree.next(0, busy, 0, 2.4); at >= 0; at = tree.next(at + 1, busy, 0, 2.4))
        out.push(tree.idAt(at));
      return out;
    };
    assert.deepEqual(visit(1.0), ['n0', 'n5', 'n7', 'n8']);
    assert.deepEqual(visit(0.45), ['n0', 'n1', 'n4', 'n5', 'n7', 'n8']);
    assert.deepEqual(visit(3), []);
    assert.equal(tree.length, 8);
    assert.deepEqual(tree.all(), ['n0', 'n1', 'n2', 'n4', 'n5', 'n6', 'n7', 'n8']);
  });
});
