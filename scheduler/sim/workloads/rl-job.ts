/**
 * The seeded rules that turn "a job of this many devices and this long" into an RL job, shared by
 * the synthetic generator and the Philly replay (docs/simulator.md cites the figures):
 *   - task kind: math (single turn, rule-based verifier), code (sandboxed tests as the reward) or
 *     agent (multi-turn, an environment answering between turns), drawn 40/30/30;
 *   - generation (with its long tail) is ~70% of a synchronous step (RollPacker, arXiv 2509.21009);
 *     completion lengths lognormal, σ 0.6–1.0, 64 sequences setting each turn's length;
 *   - idle time inside a step: math 5–15% (verifier), code 15–35% (test sandboxes), agent 30–60%
 *     (environment latency between turns plus the reward);
 *   - step length: minutes (RL in the Wild, arXiv 2509.25279: "minutes to over an hour"), lognormal
 *     around 3 min;
 *   - model size grows with devices (1: 0.5–1.5B, 2: 1.5–3B, 4: 3–7B, 8: 7–14B parameters); state is
 *     16 bytes per parameter (bf16 weights, fp32 master copy and two Adam moments) sharded over the
 *     job's devices: what a training hold's switch moves and a checkpoint writes; a generation hold
 *     moves only the bf16 weights (2 bytes per parameter); the working set adds 30% for activations
 *     and KV cache;
 *   - half the jobs allow generation to run one step ahead of training (asynchronous, one-step
 *     off-policy RL: PipelineRL, AReaL, veRL's one-step-off-policy recipe), the rest stay on-policy.
 */
import { GB, type SimJobSpec, type StepShape } from '../model.js';
import type { Rng } from '../rng.js';

export type TaskKind = 'math' | 'code' | 'agent';

const KINDS = [
  { value: 'math' as const, weight: 0.4 },
  { value: 'code' as const, weight: 0.3 },
  { value: 'agent' as const, weight: 0.3 },
];

const PARAMS: Record<number, [number, number]> = {
  1: [0.5e9, 1.5e9],
  2: [1.5e9, 3e9],
  4: [3e9, 7e9],
  8: [7e9, 14e9],
};

export function stepShape(kind: TaskKind, stepSeconds: number, rng: Rng): StepShape {
  const idle =
    kind === 'math'
      ? rng.uniform(0.05, 0.15)
      : kind === 'code'
        ? rng.uniform(0.15, 0.35)
        : rng.uniform(0.3, 0.6);
  const held = stepSeconds * (1 - idle);
  // Rollout ≈ 70% of the step in all (its held part plus the idle it causes); the rest is training.
  const generate = Math.min(held * 0.85, stepSeconds * 0.7);
  const turns = kind === 'agent' ? rng.int(3, 8) : 1;
  const envShare = kind === 'agent' ? 0.8 : 0;
  return {
    turns,
    generateSeconds: generate / turns,
    tailSigma: rng.uniform(0.6, 1.0),
    envSeconds: (stepSeconds * idle * envShare) / turns,
    rewardSeconds: stepSeconds * idle * (1 - envShare),
    trainSeconds: (held - generate) * 0.9,
    syncSeconds: (held - generate) * 0.1,
  };
}

export interface RlJobInput {
  id: string;
  tenant: string;
  arrival: number;
  devices: number;
  /** Seconds the job would run alone (steps × step time). */
  seconds: number;
  recurring: boolean;
}

export function rlJob(input: RlJobInput, rng: Rng): SimJobSpec {
  const devices = [1, 2, 4, 8].find((d) => d >= input.devices) ?? 8;
  const kind = rng.pick(KINDS);
  const stepSeconds = Math.min(1200, Math.max(60, rng.lognormal(180, 0.5)));
  const steps = Math.max(3, Math.min(400, Math.round(input.seconds / stepSeconds)));
  const [lo, hi] = PARAMS[devices]!;
  const parameters = rng.uniform(lo, hi);
  const stateBytesPerDevice = (16 * parameters) / devices;
  return {
    id: input.id,
    tenant: input.tenant,
    arrival: input.arrival,
    devices,
    priority: 1,
    steps,
    parameters,
    deviceBytes: Math.min(78 * GB, stateBytesPerDevice * 1.3),
    stateBytesPerDevice,
    // bf16 weights, tensor-parallel over the job's devices.
    generateBytesPerDevice: (2 * parameters) / devices,
    shape: stepShape(kind, stepSeconds, rng),
    checkpointEvery: 10,
    recurring: input.recurring,
    // From a fork, so that adding this draw left every other figure of the workloads as it was.
    maxWeightLag: rng.fork(0x1a9).next() < 0.5 ? 1 : 0,
  };
}
