/** A job that succeeded reported its reward for every step exactly once: none lost to a crash, none repeated by a resume. */
import type { ApiClient } from '../api-client.js';
import type { JobRec } from '../jobs.js';
import type { Violations } from '../violations.js';
import type { JobRow } from './outcomes.js';

export async function checkMetrics(
  v: Violations,
  client: ApiClient,
  job: JobRec,
  row: JobRow,
): Promise<void> {
  const m = await client.call(
    'GET',
    `/v1/jobs/${job.id}/metrics?name=reward_mean&limit=10000`,
    job.tenant.token,
  );
  if (m.status !== 200 || row.status !== 'succeeded') return;
  const steps = (m.body.data as { step: number }[]).map((x) => x.step);
  const want = Array.from({ length: job.steps }, (_, i) => i + 1);
  v.count();
  if (steps.join() !== want.join())
    v.violate(
      'metrics_every_step_once',
      `job ${job.id}: reward_mean steps ${compress(steps)} (want 1..${job.steps})`,
    );
}

/** 1,2,3,5,7,8 → "1-3,5,7-8": a list of thousands of steps, readable in one line. */
export function compress(xs: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < xs.length;) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j]! + 1) j++;
    out.push(i === j ? `${xs[i]}` : `${xs[i]}-${xs[j]}`);
    i = j + 1;
  }
  return out.join(',');
}
