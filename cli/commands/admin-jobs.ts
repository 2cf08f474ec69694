/**
 * `timeshare admin jobs preempt`: what an operator does to any tenant's job. Beside `timeshare jobs`
 * (a tenant's own jobs) because the route takes the admin key, not a tenant's token.
 */
import type { Command } from 'commander';
import { unwrap } from '../../sdk/src/index.js';
import type { Context } from '../context.js';
import { emit } from '../output.js';

export function adminJobCommands(admin: Command, ctx: () => Context): void {
  const jobs = admin.command('jobs').description("any tenant's jobs");
  jobs
    .command('preempt <id>')
    .description(
      'preempt a placed or running job: it checkpoints, leaves its devices and returns to the queue ' +
        '(not paused: a round may place it again); any other status is a conflict',
    )
    .action(async (id: string) => {
      const c = ctx();
      const r = await unwrap((await c.admin()).POST('/v1/jobs/{id}/preempt', { params: { path: { id } } }));
      // 202: the node is told; the job leaves its devices once it has checkpointed.
      emit(c, r, () =>
        console.log(
          `job ${r.jobId} preemption requested: it checkpoints, leaves its devices and returns to the queue`,
        ),
      );
    });
}
