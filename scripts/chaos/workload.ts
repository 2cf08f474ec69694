/**
 * The jobs: their specs and submission times, drawn from the seed. Small models and short runs,
 * so that each job lives through several faults; every kind of plan (temporal, spatial, auto) on
 * one and two devices, every priority, and a checkpoint every 4–12 steps so that a resume has
 * something to resume from.
 */
import type { Random } from './random.js';

export const TENANT_NAMES = ['alpha', 'beta'] as const;

export interface WorkloadOptions {
  jobs: number;
  faultSeconds: number;
  steps: { lo: number; hi: number };
  preset: string;
}

export type JobSpec = ReturnType<typeof drawJobSpec>;

export interface PlannedJob {
  /** ms after the workload starts */
  at: number;
  spec: JobSpec;
  /** index into TENANT_NAMES */
  tenant: number;
}

function drawJobSpec(random: Random, i: number, o: WorkloadOptions) {
  const kind = random.pick(['temporal1', 'temporal1', 'temporal2', 'spatial2', 'auto1', 'auto2'] as const);
  const steps = Math.floor(random.between(o.steps.lo, o.steps.hi));
  const devices = kind.endsWith('2') ? 2 : 1;
  const mode = kind.startsWith('temporal') ? 'temporal' : kind.startsWith('spatial') ? 'spatial' : 'auto';
  return {
    name: `soak-${i}-${kind}`,
    priority: random.pick(['low', 'normal', 'normal', 'high', 'urgent'] as const),
    maxAttempts: 20,
    resources: { devices },
    workflow: {
      mode,
      model: { preset: o.preset },
      task: { name: 'addition', digits: 1 },
      steps,
      promptsPerStep: 16,
      groupSize: 8,
      checkpointEvery: Math.floor(random.between(4, 12)),
      evalEvery: 1000,
      warmup: { maxSteps: 0 },
    },
  };
}

/** Submitted over the first 60 % of the fault window, so that the last jobs still meet faults. */
export function drawJobs(random: Random, o: WorkloadOptions): PlannedJob[] {
  const jobs = Array.from({ length: o.jobs }, (_, i) => ({
    at: random.between(0, o.faultSeconds * 0.6) * 1000,
    spec: drawJobSpec(random, i, o),
    tenant: i % TENANT_NAMES.length,
  }));
  return jobs.sort((a, b) => a.at - b.at);
}

/** One line a job, to ms, with its whole spec: what `--plan-only` prints. */
export function formatJobs(jobs: readonly PlannedJob[]): string[] {
  return jobs.map(
    (j) => `  ${(j.at / 1000).toFixed(3)}s ${TENANT_NAMES[j.tenant]} ${JSON.stringify(j.spec)}`,
  );
}
