/**
 * When each fault strikes and of what kind, drawn from the seed before anything runs; whom it
 * hits is chosen when it strikes, from what is alive then (injectors.ts).
 */
import type { Random } from './random.js';

/** What a run draws from unless told otherwise: a seed's plan stays what it was when it was run. */
export const DEFAULT_FAULTS = [
  'kill_leader',
  'kill_standby',
  'kill_api',
  'kill_daemon',
  'kill_engine',
  'pause_daemon',
  'redis_wipe',
] as const;
/**
 * Every kind `--faults` may name. `pause_job` is a tenant's action, not a failure: it pauses a job
 * that has not ended through the API and resumes it 1–8 s later, so pauses meet the faults.
 */
export const ALL_FAULTS = [...DEFAULT_FAULTS, 'pause_job'] as const;
export type FaultKind = (typeof ALL_FAULTS)[number];

export interface PlannedFault {
  /** ms after the workload starts */
  at: number;
  kind: FaultKind;
  /** the fault's own draws (delays, durations) */
  random: Random;
}

export interface FaultPlanOptions {
  faultSeconds: number;
  /** seconds between planned faults */
  gap: { lo: number; hi: number };
  /** the kinds to draw from; a kind listed twice is drawn twice as often */
  faults: readonly FaultKind[];
}

/**
 * A fault every gap.lo–gap.hi s from 8–15 s on, and three times in ten a second one within 2 s
 * of it, so that some recoveries overlap: a fault that strikes while the system is still
 * recovering from another is where the single-fault tests do not reach.
 */
export function drawFaultPlan(random: Random, o: FaultPlanOptions): PlannedFault[] {
  const plan: PlannedFault[] = [];
  for (
    let at = random.between(8, 15) * 1000;
    at < o.faultSeconds * 1000;
    at += random.between(o.gap.lo, o.gap.hi) * 1000
  ) {
    plan.push({ at, kind: random.pick(o.faults), random: random.fork() });
    if (random.next() < 0.3)
      plan.push({ at: at + random.between(0, 2) * 1000, kind: random.pick(o.faults), random: random.fork() });
  }
  return plan;
}

/** One line, as the run logs it. */
export function planLine(plan: readonly PlannedFault[]): string {
  return `plan: ${plan.map((p) => `${(p.at / 1000).toFixed(1)}s:${p.kind}`).join(' ')}`;
}

/** One line a fault, to ms, with the seed of its own draws: what `--plan-only` prints. */
export function formatFaultPlan(plan: readonly PlannedFault[]): string[] {
  return plan.map((p) => `  ${(p.at / 1000).toFixed(3)}s ${p.kind} ${p.random.seed}`);
}
