/** `timeshare submit` and `timeshare jobs list|get|cancel|pause|resume|priority|wait`. */
import { Argument, type Command } from 'commander';
import { unwrap, type Job, type JobSpec, type components } from '../../sdk/src/index.js';
import { CliError, type Context } from '../context.js';
import { describeJob, pauseOutcome } from '../format.js';
import { parseInteger, parseNumber } from '../numeric-options.js';
import { emit, table } from '../output.js';
import { readSpecFile } from '../spec-file.js';

export const finalStatuses = new Set(['succeeded', 'failed', 'cancelled']);

/** The priorities a job may have, lowest first (the API's JobUpdate enum). */
const priorities = [
  'low',
  'normal',
  'high',
  'urgent',
] as const satisfies readonly components['schemas']['JobUpdate']['priority'][];

/**
 * When a polled job reached the status it is in: a finished job says when (it may have finished
 * long before `wait` started); for the others the poll that saw the change is as close as we get.
 */
const statusTime = (job: Job): string =>
  (finalStatuses.has(job.status) && job.finishedAt) || new Date().toISOString();

/** `  step 12/40, estimated finish …` once a run reported a step. */
const progressText = (job: Job): string => {
  const p = job.progress;
  if (p.step === null) return '';
  return `  step ${p.step}/${p.steps}${p.estimatedFinishAt ? `, estimated finish ${p.estimatedFinishAt}` : ''}`;
};

async function getJob(ctx: Context, id: string): Promise<Job> {
  const client = await ctx.tenant();
  return unwrap(client.GET('/v1/jobs/{id}', { params: { path: { id } } }));
}

export function jobCommands(program: Command, ctx: () => Context): void {
  program
    .command('submit <file>')
    .description('submit a job spec (YAML or JSON); prints its id, queue position and ETA')
    .option('--idempotency-key <key>', 'the same key and spec return the same job (safe retries)')
    .action(async (file: string, opts: { idempotencyKey?: string }) => {
      const c = ctx();
      const spec = (await readSpecFile(file)) as JobSpec;
      const client = await c.tenant();
      const answer = client.POST('/v1/jobs', {
        body: spec,
        params: { header: opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : {} },
      });
      const created = await unwrap(answer);
      // A replay answers with the job the key made before, as it is now: the same object either
      // way, so that a script's retry reads what its first try would have. Whether anything was
      // submitted is said on stderr (with --json too), where it changes no job object on stdout.
      if ((await answer).response.headers.get('Idempotent-Replayed') === 'true') {
        console.error(
          `idempotency key ${opts.idempotencyKey} was used before: nothing new submitted, this is the job it made`,
        );
      }
      // The submit answer is written before the scheduler has looked; the job's own page carries
      // its queue position, ETA and wait reason as soon as they are known.
      const job = await getJob(c, created.id).catch(() => created);
      emit(c, job, () => console.log(describeJob(job).join('\n')));
    });

  const jobs = program
    .command('jobs')
    .description('list, inspect, cancel, pause, resume, reprioritize and wait for your jobs');
  jobs
    .command('list')
    .description('your jobs, newest first')
    .option('--status <status>', 'only jobs in this status')
    .option('--name <name>', 'only jobs with this name')
    .option('--limit <n>', 'at most this many', parseInteger, 20)
    .option('--after <cursor>', 'the nextCursor of a previous page')
    .action(async (opts: { status?: Job['status']; name?: string; limit: number; after?: string }) => {
      const c = ctx();
      const client = await c.tenant();
      const page = await unwrap(client.GET('/v1/jobs', { params: { query: opts } }));
      emit(c, page, () => {
        const rows = page.data.map((j) => [
          j.id,
          j.name,
          j.status,
          j.progress.step === null ? null : `${j.progress.step}/${j.progress.steps}`,
          j.queuePosition,
          j.estimatedStartAt,
          j.waitReason,
          j.createdAt,
        ]);
        console.log(table(['id', 'name', 'status', 'step', 'queue', 'eta', 'waiting for', 'created'], rows));
        if (page.nextCursor) console.log(`more: --after ${page.nextCursor}`);
      });
    });

  jobs
    .command('get <id>')
    .description(
      'one job: while queued its position, ETA and wait reason; its step, and while running its estimated finish',
    )
    .action(async (id: string) => {
      const c = ctx();
      const job = await getJob(c, id);
      emit(c, job, () => console.log(describeJob(job).join('\n')));
    });

  jobs
    .command('cancel <id>')
    .description('cancel a job (idempotent)')
    .action(async (id: string) => {
      const c = ctx();
      const client = await c.tenant();
      const job = await unwrap(client.POST('/v1/jobs/{id}/cancel', { params: { path: { id } } }));
      emit(c, job, () => console.log(`job ${job.id} ${job.status}`));
    });

  for (const [action, description] of [
    [
      'pause',
      'pause a job (idempotent): it is not placed, and a running one checkpoints and leaves its devices',
    ],
    ['resume', 'resume a paused job (idempotent): it goes on from its newest checkpoint'],
  ] as const) {
    jobs
      .command(`${action} <id>`)
      .description(description)
      .action(async (id: string) => {
        const c = ctx();
        const client = await c.tenant();
        // The route answers the job whether or not this call changed it; its `pausedAt` before
        // the call tells which, so that a repeat says so rather than reading like a refusal.
        const before = await getJob(c, id);
        const job = await unwrap(client.POST(`/v1/jobs/{id}/${action}`, { params: { path: { id } } }));
        emit(c, job, () => console.log(pauseOutcome(action, before, job)));
      });
  }

  jobs
    .command('priority')
    .description("change a job's priority among your jobs (idempotent)")
    .argument('<id>')
    .addArgument(new Argument('<priority>').choices(priorities))
    .action(async (id: string, priority: (typeof priorities)[number]) => {
      const c = ctx();
      const client = await c.tenant();
      const job = await unwrap(
        client.PATCH('/v1/jobs/{id}', { params: { path: { id } }, body: { priority } }),
      );
      emit(c, job, () => console.log(`job ${job.id} priority ${job.priority}`));
    });

  jobs
    .command('wait <id>')
    .description(
      'wait until the job finishes, printing its status and step as they change; exits 0 if it succeeded, 1 otherwise',
    )
    .option('--interval <seconds>', 'poll period', parseNumber, 2)
    .option('--timeout <seconds>', 'give up after this long (exit 2)', parseNumber)
    .action(async (id: string, opts: { interval: number; timeout?: number }) => {
      const c = ctx();
      const deadline = opts.timeout ? Date.now() + opts.timeout * 1000 : Infinity;
      let last = '';
      for (;;) {
        const job = await getJob(c, id);
        // A line when the status changes, and while it runs when its step does.
        const now = `${job.status}${job.status === 'running' ? progressText(job) : ''}`;
        if (!c.json && now !== last) console.error(`${statusTime(job)}  ${now}`);
        last = now;
        if (finalStatuses.has(job.status)) {
          emit(c, job, () => console.log(describeJob(job).join('\n')));
          if (job.status !== 'succeeded') process.exitCode = 1;
          return;
        }
        if (Date.now() > deadline) {
          process.exitCode = 2;
          throw new CliError('timeout', `job ${id} still ${job.status} after ${opts.timeout} s`);
        }
        await new Promise((r) => setTimeout(r, opts.interval * 1000));
      }
    });
}
