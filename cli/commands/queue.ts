/**
 * `timeshare queue <pool>` (admin): the pool's pending jobs in the scheduler's order, with each
 * job's position in the pool and in its tenant's queue, estimated start and wait reason. Tenants
 * see their own jobs' positions in `jobs list` and `jobs get`.
 */
import type { Command } from 'commander';
import { unwrap } from '../../sdk/src/index.js';
import type { Context } from '../context.js';
import { parseInteger } from '../numeric-options.js';
import { emit, table } from '../output.js';

export function queueCommand(program: Command, ctx: () => Context): void {
  program
    .command('queue <pool>')
    .description("a pool's queue in the scheduler's order: positions, estimated starts, wait reasons (admin)")
    .option('--offset <n>', 'skip this many', parseInteger, 0)
    .option('--limit <n>', 'at most this many', parseInteger, 100)
    .action(async (pool: string, opts: { offset: number; limit: number }) => {
      const c = ctx();
      const page = await unwrap(
        (await c.admin()).GET('/v1/pools/{name}/queue', {
          params: { path: { name: pool }, query: { offset: opts.offset, limit: opts.limit } },
        }),
      );
      emit(c, page, () => {
        console.log(
          table(
            ['#', 'job', 'name', 'tenant', 'tenant #', 'priority', 'eta', 'waiting for', 'queued'],
            page.data.map((j) => [
              j.queuePosition,
              j.jobId,
              j.name,
              j.tenantName,
              j.tenantQueuePosition,
              j.priority,
              j.estimatedStartAt,
              j.waitReason,
              j.queuedAt,
            ]),
          ),
        );
        const shown = page.offset + page.data.length;
        console.log(
          `${page.total} queued in ${pool}${shown < page.total ? `; more: --offset ${shown}` : ''}`,
        );
      });
    });
}
