/** `timeshare metrics <job>`: a table of the job's metrics per step and a sparkline of the reward. */
import type { Command } from 'commander';
import sparkly from 'sparkly';
import { allJobMetrics } from '../../sdk/src/metrics.js';
import type { Context } from '../context.js';
import { parseInteger } from '../numeric-options.js';
import { emit, table } from '../output.js';

const REWARD = 'reward_mean';
const SPARK_WIDTH = 60;

/** Means of equal runs of steps, so a long run still fits one terminal line. */
function buckets(values: number[], width: number): number[] {
  if (values.length <= width) return values;
  const out: number[] = [];
  for (let i = 0; i < width; i++) {
    const part = values.slice(
      Math.floor((i * values.length) / width),
      Math.floor(((i + 1) * values.length) / width),
    );
    out.push(part.reduce((a, b) => a + b, 0) / part.length);
  }
  return out;
}

export function metricsCommand(program: Command, ctx: () => Context): void {
  program
    .command('metrics <job>')
    .description("a job's metrics per step, with a sparkline of its mean reward")
    .option('--name <name>', 'only this metric')
    .option('--from-step <n>', 'first step', parseInteger)
    .option('--to-step <n>', 'last step', parseInteger)
    .option('--rows <n>', 'show the last n steps in the table', parseInteger, 20)
    .action(async (id: string, opts: { name?: string; fromStep?: number; toStep?: number; rows: number }) => {
      const c = ctx();
      const client = await c.tenant();
      const data = await allJobMetrics(client, id, {
        name: opts.name,
        from_step: opts.fromStep,
        to_step: opts.toStep,
      });
      emit(c, data, () => {
        if (data.length === 0) return console.log('no metrics yet');
        const names = [...new Set(data.map((m) => m.name))].sort();
        const bySteps = new Map<number, Map<string, number>>();
        for (const m of data) {
          if (!bySteps.has(m.step)) bySteps.set(m.step, new Map());
          // "NaN", "Infinity" and "-Infinity" (what JSON cannot write) read back as the numbers they name.
          bySteps.get(m.step)!.set(m.name, Number(m.value));
        }
        const steps = [...bySteps.keys()].sort((a, b) => a - b);
        const shown = steps.slice(-opts.rows);
        const fmt = (v: number | undefined) => (v === undefined ? null : Number(v.toPrecision(4)));
        console.log(
          table(
            ['step', ...names],
            shown.map((s) => [s, ...names.map((n) => fmt(bySteps.get(s)!.get(n)))]),
          ),
        );
        const reward = steps
          .map((s) => bySteps.get(s)!.get(REWARD))
          .filter((v): v is number => v !== undefined && Number.isFinite(v));
        if (reward.length > 1) {
          const line = sparkly(buckets(reward, SPARK_WIDTH), { minimum: 0, maximum: 1 });
          console.log(`${REWARD} ${line}  ${fmt(reward[0])} → ${fmt(reward[reward.length - 1])}`);
        }
      });
    });
}
