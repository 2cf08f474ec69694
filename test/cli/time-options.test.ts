// `--since` of the timelines: a duration before now or an ISO time, anything else refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { durationMs, timeAt } from '../../cli/time-options.js';

const now = Date.parse('2030-01-01T12:00:00Z');

test('durations: s, m, h, d, and several together', () => {
  assert.equal(durationMs('90s'), 90_000);
  assert.equal(durationMs('10m'), 600_000);
  assert.equal(durationMs('1h30m'), 5_400_000);
  assert.equal(durationMs('1.5h'), 5_400_000);
  assert.equal(durationMs('2d'), 172_800_000);
  for (const bad of ['', '10', 'm', '10 m', '10min', '-5m', '1h 30m'])
    assert.equal(durationMs(bad), null, bad);
  assert.equal(timeAt('2h', now), now - 7_200_000);
});

test('ISO times, with or without a time and a zone; other dates are refused', () => {
  assert.equal(timeAt('2029-12-31T23:00:00Z', now), Date.parse('2029-12-31T23:00:00Z'));
  assert.equal(timeAt('2029-12-31T23:00:00.5+01:00', now), Date.parse('2029-12-31T22:00:00.500Z'));
  assert.equal(timeAt('2029-12-31', now), Date.parse('2029-12-31'));
  for (const bad of ['yesterday', '5', 'May 1', '2029-13-45', '12:00'])
    assert.equal(timeAt(bad, now), null, bad);
});
