// A workload's ceilings (ceilings.ts): the idle share and generation's tail, device-time weighted,
// and what filling the one and cutting the other can be worth, on hand-made step shapes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { turnShares, workloadCeilings } from '../ceilings.js';
import { GiB, NO_QUOTA, stepFigures, type SimJobSpec, type SimWorkload, type StepShape } from '../model.js';
import { syntheticWorkload } from '../workloads/synthetic.js';

/** A one-turn step of `held` seconds on the devices, idle `f` of it all, tail drawn at σ. */
function shape(held: number, f: number, sigma: number): StepShape {
  const generate = held * 0.7;
  return {
    turns: 1,
    generateSeconds: generate,
    tailSigma: sigma,
    envSeconds: 0,
    rewardSeconds: (held * f) / (1 - f),
    trainSeconds: (held - generate) * 0.9,
    syncSeconds: (held - generate) * 0.1,
  };
}

function job(id: string, devices: number, s: StepShape, maxWeightLag = 0, steps = 10): SimJobSpec {
  return {
    id,
    tenant: 't',
    arrival: 0,
    devices,
    priority: 1,
    steps,
    parameters: 1e9,
    deviceBytes: 10 * GiB,
    stateBytesPerDevice: 16e9 / devices,
    generateBytesPerDevice: 2e9 / devices,
    shape: s,
    checkpointEvery: 10,
    maxWeightLag,
  };
}

const workload = (jobs: SimJobSpec[]): SimWorkload => ({
  name: 'ceilings',
  cluster: { nodes: 1, devicesPerNode: 8, deviceMemoryBytes: 80 * GiB, hostMemoryBytes: 2048 * GiB },
  tenants: [{ id: 't', weight: 1, ...NO_QUOTA }],
  jobs,
});

const close = (a: number, b: number, eps = 1e-9) => assert.ok(Math.abs(a - b) <= eps, `${a} ≠ ${b}`);

describe('turnShares', () => {
  it('has no tail without spread in completion lengths', () => {
    assert.deepEqual(turnShares(0, 2), { tail: 0, recovered: 0 });
  });

  it('recovers most, not all, of the tail by carrying two groups of eight, and more than carrying one', () => {
    for (const sigma of [0.6, 0.8, 1.0]) {
      const two = turnShares(sigma, 2);
      const one = turnShares(sigma, 1);
      assert.ok(two.tail > 0.05 && two.tail < 0.5, `tail ${two.tail} at σ ${sigma}`);
      assert.ok(two.recovered / two.tail > 0.85 && two.recovered < two.tail, `σ ${sigma}: ${two.recovered}`);
      assert.ok(one.recovered < two.recovered, `σ ${sigma}: one group ${one.recovered}`);
    }
  });

  it('grows with σ and lies between its grid points', () => {
    const [a, b, c] = [0.8, 0.825, 0.85].map((s) => turnShares(s, 2));
    assert.ok(a!.tail < c!.tail);
    assert.ok(b!.tail >= a!.tail && b!.tail <= c!.tail);
    close(b!.tail, (a!.tail + c!.tail) / 2);
  });
});

describe('workloadCeilings', () => {
  it('is 1/(1 − f) for filling alone when no job has a tail, and nothing to cut', () => {
    const c = workloadCeilings(
      workload([job('a', 1, shape(100, 0.3, 0), 1), job('b', 4, shape(50, 0.3, 0))]),
    );
    close(c.idleShare, 0.3);
    close(c.tailShare, 0);
    close(c.carry, 1);
    close(c.carryAll, 1);
    close(c.fillAndCarry, 1 / 0.7);
  });

  it('weights each job by its devices × steps', () => {
    const a = shape(100, 0.1, 0);
    const b = shape(100, 0.5, 0);
    const c = workloadCeilings(workload([job('a', 1, a, 0, 10), job('b', 4, b, 0, 5)]));
    const [fa, fb] = [stepFigures(a), stepFigures(b)];
    close(c.idleShare, 1 - (fa.held * 10 + fb.held * 20) / (fa.step * 10 + fb.step * 20));
  });

  it('counts the recovered tail of the jobs that allow weight lag only', () => {
    const s = shape(100, 0.2, 0.8);
    const generating = s.turns * s.generateSeconds;
    const held = stepFigures(s).held;
    const shares = turnShares(0.8, 2);
    const onPolicy = workloadCeilings(workload([job('a', 2, s, 0), job('b', 2, s, 0)]));
    const offPolicy = workloadCeilings(workload([job('a', 2, s, 1), job('b', 2, s, 1)]));
    const half = workloadCeilings(workload([job('a', 2, s, 0), job('b', 2, s, 1)]));
    close(onPolicy.carry, 1);
    close(onPolicy.tailShare, (generating * shares.tail) / held);
    close(onPolicy.carryAll, held / (held - generating * shares.recovered));
    close(offPolicy.carry, offPolicy.carryAll);
    close(half.carriedShare, offPolicy.carriedShare / 2);
    close(offPolicy.fillAndCarry, stepFigures(s).step / (held - generating * shares.recovered));
  });

  it('no partial rollouts, nothing recovered', () => {
    const c = workloadCeilings(workload([job('a', 1, shape(100, 0.2, 0.9), 1)]), 0);
    close(c.carry, 1);
    assert.ok(c.tailShare > 0);
  });

  it('is the same for the same seed', () => {
    assert.deepEqual(
      workloadCeilings(syntheticWorkload({ seed: 3 })),
      workloadCeilings(syntheticWorkload({ seed: 3 })),
    );
  });
});
