// The engine-side fencing check: a lower token than one already accepted is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FencingGuard } from '../fencing-guard.js';

describe('device lock: fencing guard', () => {
  it('refuses tokens older than the newest accepted, per device', () => {
    const g = new FencingGuard();
    assert.equal(g.accept('d0', 3), true);
    assert.equal(g.accept('d0', 3), true, 'the same holder again');
    assert.equal(g.accept('d0', 2), false, 'a holder that lost the device');
    assert.equal(g.accept('d1', 1), true, 'devices are independent');
    assert.equal(g.acceptAll({ d0: 4, d1: 0 }), false, 'all or none');
    assert.equal(g.accept('d0', 4), true, 'the refused group accepted nothing');
    assert.equal(g.acceptAll({ d0: 5, d1: 2 }), true);
    assert.equal(g.accept('d1', 1), false);
  });
});
