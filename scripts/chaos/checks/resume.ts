/** A run resumes from the newest checkpoint the job had announced: none of the committed work is redone or lost. */
import type { JobRec } from '../jobs.js';
import type { Violations } from '../violations.js';

export function checkResumes(v: Violations, job: JobRec): void {
  const ckptSteps: number[] = [];
  let runs = 0;
  for (const e of job.events) {
    if (e.type === 'job.checkpoint') ckptSteps.push(Number(e.data.step));
    if (e.type !== 'job.running') continue;
    runs++;
    const newest = Math.max(0, ...ckptSteps);
    const resumed = Number(e.data.resumedFromStep ?? 0);
    v.count();
    if (resumed < newest)
      v.violate(
        'resume_from_newest_checkpoint',
        `job ${job.id} run ${runs} (event ${e.id}) resumed from step ${resumed}, newest committed checkpoint was step ${newest}`,
      );
  }
}
