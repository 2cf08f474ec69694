/**
 * Every plan the engine can run on n devices, each with its predicted step time: what the search
 * chose among, for the README's worked example, benchmarks and anyone asking why a job got its plan.
 */
import type { Workload } from '../core/types.js';
import type { CostModel } from './cost-model.js';
import { searchEnginePlan } from './plan-job.js';

export interface Candidate {
  label: string;
  stepSeconds: number;
}

export function candidatePlans(model: CostModel, w: Workload, devices: number): Candidate[] {
  const out: Candidate[] = [];
  const add = (label: string, mode: Workload['mode'], over: Partial<Workload> = {}) => {
    const p = searchEnginePlan(model, { ...w, ...over }, devices, mode);
    out.push({
      label: `${label}: ${p.mode}, generate on ${p.generate.length}, train on ${p.train.length}, ${p.microBatches} micro-batch(es)`,
      stepSeconds: p.stepSeconds,
    });
  };
  add('temporal', 'temporal');
  for (const m of [1, 2, 4, 8].filter((m) => w.promptsPerStep % m === 0)) {
    add(`spatial m=${m}`, 'spatial', { microBatches: m });
    add(`hybrid m=${m}`, 'hybrid', { microBatches: m });
  }
  add('auto (the search)', 'auto');
  return out;
}
