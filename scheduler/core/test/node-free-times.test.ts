// The estimate's per-node replay against a brute force: after random occupations and extensions,
// the node where a width frees up first is the one a scan over every node finds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodeFreeTimes } from '../node-free-times.js';
import { seeded } from './builders.js';

describe('NodeFreeTimes', () => {
  it('finds the earliest node for each width as a scan does, through 2,000 random occupations', () => {
    const { rand, pick } = seeded(11);
    const one = <T>(xs: readonly T[]) => xs[pick(xs.length)]!;
    let found = 0;
    const nodes = Array.from({ length: 13 }, () =>
      Array.from({ length: one([4, 8]) }, () => Math.floor(rand() * 100)),
    );
    const free = new NodeFreeTimes(nodes, 10);
    const brute = nodes.map((ts) => ts.map((t) => Math.max(10, t)));
    for (let step = 0; step < 2000; step++) {
      const width = one([1, 2, 4, 8, 9]);
      const got = free.earliest(width);
      const keys = brute.map((ts) =>
        width <= ts.length ? [...ts].sort((a, b) => a - b)[width - 1]! : Infinity,
      );
      const best = Math.min(...keys);
      if (best === Infinity) {
        assert.equal(got, null);
        continue;
      }
      found++;
      assert.ok(
        got && got.at === best && keys[got.node] === best,
        `step ${step}: ${JSON.stringify(got)} vs ${best}`,
      );
      // The job takes the node's `width` earliest devices until some later time.
      const until = best + Math.floor(rand() * 50);
      free.occupy(got.node, width, until);
      const ts = brute[got.node]!.map((t, i) => [t, i] as const).sort((a, b) => a[0] - b[0]);
      for (let k = 0; k < width; k++) brute[got.node]![ts[k]![1]] = until;
      // Now and then a joiner outlives the job on some devices: those free at one time stay taken.
      if (rand() < 0.3) {
        const node = pick(brute.length);
        const at = one(brute[node]!);
        const same = brute[node]!.filter((t) => t === at).length;
        const w = 1 + pick(same + 1);
        assert.equal(free.holds(node, w, at), w <= same);
        if (w <= same) {
          const later = at + 1 + Math.floor(rand() * 30);
          free.extend(node, w, at, later);
          let left = w;
          brute[node] = brute[node]!.map((t) => (left > 0 && t === at ? (left--, later) : t));
        }
      }
    }
    // Every width but 9 (wider than any node) was placed: the walk was exercised, not skipped.
    assert.ok(found > 1200, String(found));
    // A node the replay does not know holds nothing.
    assert.equal(free.holds(nodes.length, 1, 10), false);
  });
});
