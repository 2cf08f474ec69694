/**
 * Test-only workload shift: `TIMESHARE_TEST_LONG_COMPLETIONS=<step>:<tokens>[:<job name>]` in a
 * worker's environment makes every completion its jobs (or its jobs of that name) sample after step <step> run to <tokens> new tokens,
 * with no stop token to end one early (the engine samples no id past its vocabulary). Generation
 * then decodes more steps and training trains on the longer sequences: the engine's real work
 * changes mid-run, as when a policy learns to answer at length, and the profiles the job reports
 * follow. The end-to-end re-planning test (test/e2e/planner-replan.test.ts) uses it; unset, nothing changes.
 */
import type { Engine } from '../native/index.js';
import type { RunnerStart } from './messages.js';

/** An id no task's vocabulary reaches: generation never stops before maxNewTokens. */
const NEVER = 65535;

export function parseLongCompletions(
  value: string | undefined,
): { afterStep: number; tokens: number; job: string | null } | null {
  const m = /^(\d+):(\d+)(?::(.+))?$/.exec(value ?? '');
  return m ? { afterStep: Number(m[1]), tokens: Number(m[2]), job: m[3] ?? null } : null;
}

/**
 * Wraps the engine that samples completions: `rlStep` (temporal, one call a step) or `generate`
 * (a spatial generator, `microBatches` calls a step), counting the job's steps from where it resumed.
 */
export function lengthenCompletions(
  engine: Engine,
  start: RunnerStart,
  call: 'rlStep' | 'generate',
  env: NodeJS.ProcessEnv = process.env,
): void {
  const shift = parseLongCompletions(env.TIMESHARE_TEST_LONG_COMPLETIONS);
  if (!shift || (shift.job !== null && shift.job !== start.spec.name)) return;
  const perStep =
    call === 'generate' ? (start.placement.microBatches ?? start.spec.workflow.microBatches) : 1;
  const first = start.resume?.fromOwnRun ? start.resume.step : 0;
  let calls = 0;
  const longer = () => first + Math.floor(calls++ / perStep) + 1 > shift.afterStep;
  const long = { maxNewTokens: shift.tokens, stopToken: NEVER };
  if (call === 'rlStep') {
    const rlStep = engine.rlStep.bind(engine);
    engine.rlStep = (o = {}) => rlStep(longer() ? { ...o, generate: { ...o.generate, ...long } } : o);
  } else {
    const generate = engine.generate.bind(engine);
    engine.generate = (o = {}) => generate(longer() ? { ...o, ...long } : o);
  }
}
