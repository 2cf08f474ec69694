/** `timeshare quota` and `timeshare usage`: the calling tenant's limits and what it has used. */
import type { Command } from 'commander';
import { unwrap } from '../../sdk/src/index.js';
import type { Context } from '../context.js';
import { emit, table } from '../output.js';

export function accountCommands(program: Command, ctx: () => Context): void {
  program
    .command('quota')
    .description('your quota and what remains of it')
    .action(async () => {
      const c = ctx();
      const usage = await unwrap((await c.tenant()).GET('/v1/usage'));
      const { quota, remaining } = usage;
      emit(c, { quota, remaining }, () =>
        console.log(
          table(
            ['limit', 'quota', 'remaining'],
            [
              ['active jobs', quota.maxActiveJobs, remaining.activeJobs],
              ['concurrent devices', quota.maxConcurrentDevices, null],
              ['devices per job', quota.maxDevicesPerJob, null],
              ['device hours / month', quota.deviceHoursPerMonth, Number(remaining.deviceHours.toFixed(3))],
            ],
          ),
        ),
      );
    });

  program
    .command('usage')
    .description('device time this month and your jobs in flight')
    .action(async () => {
      const c = ctx();
      const u = await unwrap((await c.tenant()).GET('/v1/usage'));
      emit(c, u, () =>
        console.log(
          table(
            ['since', 'device hours', 'active jobs', 'queued', 'running'],
            [
              [
                u.periodStart,
                Number(u.deviceHoursUsed.toFixed(4)),
                u.activeJobs,
                u.queuedJobs,
                u.runningJobs,
              ],
            ],
          ),
        ),
      );
    });
}
