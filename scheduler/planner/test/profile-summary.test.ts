import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROFILE_WINDOW_STEPS, WARMUP_STEPS, stageSamples, type ProfileRow } from '../profile-summary.js';

const row = (stage: string, step: number, seconds: number, devices = 2, batch = 512): ProfileRow => ({
  stage,
  step,
  seconds,
  batch,
  devices,
  peakBytes: 0,
  onloadSeconds: 0,
  offloadSeconds: 0,
});

describe('stageSamples', () => {
  it('fits a shape from its most recent steps: a job whose generation slowed is priced at its new pace', () => {
    // 40 steps at 1 s, then 10 at 2 s (completions grew longer): the fit over every step would say
    // (38 × 1 + 10 × 2) / 48 = 1.21 s.
    const rows = [
      ...Array.from({ length: 40 }, (_, i) => row('generate', i + 1, 1)),
      ...Array.from({ length: 10 }, (_, i) => row('generate', 41 + i, 2)),
    ];
    const [g] = stageSamples(rows);
    const old = PROFILE_WINDOW_STEPS - 10;
    assert.equal(g!.count, PROFILE_WINDOW_STEPS);
    assert.ok(Math.abs(g!.computeSeconds - (old * 1 + 10 * 2) / PROFILE_WINDOW_STEPS) < 1e-9);
  });

  it('keeps the last window of a shape the job no longer runs, beside the current one', () => {
    // 30 steps on 2 devices, then 30 on 4 (a move): both device counts stay in the fit.
    const rows = [
      ...Array.from({ length: 30 }, (_, i) => row('train', i + 1, 3, 2)),
      ...Array.from({ length: 30 }, (_, i) => row('train', 31 + i, 1.6, 4)),
    ];
    const byDevices = new Map(stageSamples(rows).map((s) => [s.devices, s]));
    assert.equal(byDevices.get(2)!.count, PROFILE_WINDOW_STEPS);
    assert.equal(byDevices.get(4)!.count, PROFILE_WINDOW_STEPS);
    assert.equal(byDevices.get(2)!.computeSeconds, 3);
    assert.ok(Math.abs(byDevices.get(4)!.computeSeconds - 1.6) < 1e-9);
  });

  it('counts every call of a step in the window (a spatial step makes one call per micro-batch)', () => {
    const rows = Array.from({ length: 20 }, (_, i) => [
      row('generate', i + 1, 1, 1, 128),
      row('generate', i + 1, 1, 1, 128),
    ]).flat();
    const [g] = stageSamples(rows);
    assert.equal(g!.count, 2 * Math.min(PROFILE_WINDOW_STEPS, 20 - WARMUP_STEPS));
  });
});
