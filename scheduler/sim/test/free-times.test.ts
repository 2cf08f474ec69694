import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FreeTimes } from '../free-times.js';

describe('FreeTimes', () => {
  it('takes the earliest devices across entries and keeps the rest of a split entry', () => {
    const f = new FreeTimes();
    f.add(30, 2);
    f.add(10, 1);
    f.add(20, 4);
    assert.equal(f.size, 7);
    // The 1 device at 10 and 2 of the 4 at 20: the last of them is free at 20.
    assert.equal(f.take(3), 20);
    assert.equal(f.size, 4);
    assert.equal(f.take(2), 20);
    assert.equal(f.take(2), 30);
    assert.equal(f.size, 0);
  });

  it('replays like one entry per device', () => {
    // Against a plain sorted list of per-device times, on a seeded mix of adds and takes.
    let seed = 7;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const f = new FreeTimes();
    const list: number[] = [];
    for (let i = 0; i < 500; i++) {
      if (list.length > 0 && rand() < 0.5) {
        const need = 1 + Math.floor(rand() * Math.min(8, list.length));
        list.sort((a, b) => a - b);
        const expected = list.splice(0, need).at(-1);
        assert.equal(f.take(need), expected);
      } else {
        const at = Math.floor(rand() * 100);
        const n = 1 + Math.floor(rand() * 8);
        f.add(at, n);
        for (let k = 0; k < n; k++) list.push(at);
      }
      assert.equal(f.size, list.length);
    }
  });
});
