/**
 * `npm run bench:coldstart`: how long a job waits to start on an idle pool, with real processes
 * (the API, the scheduler and a worker daemon with its job processes) at the production defaults
 * (1 s rounds, 2 s assignment polls, 5 s heartbeats).
 *
 *   1. submit → first RL step: 20 jobs one after another on an idle, registered, warm pool (each
 *      submitted once the previous one finished), with the phases in between: submit → placed
 *      (the scheduler's round), placed → running (the daemon hears of it and starts the job
 *      process, which builds its engine), running → step 1 reported (lock, onload, one RL step,
 *      offload, report). Jobs skip the supervised warm-up (`warmup.maxSteps: 0`): it is the
 *      model's, not the system's.
 *   2. node registration → first job running: a job waits in a pool with no node; a daemon starts
 *      and registers; from the node's registration to the job's `job.running` (5 times, each a new
 *      daemon).
 *
 * Times come from PostgreSQL's clock (row and event timestamps, ms), so polling adds nothing.
 * `COLDSTART_BASELINE=1` also runs phase 1 without the daemon's spare job process
 * (`TIMESHARE_SPARE_RUNNER=off`: each job forks its process when placed) in the same run.
 * Target: p95 < 1 s submit → first RL step.
 */
import { startCluster, waitFor, type Cluster } from '../helpers/cluster.js';
import type { TestTenant } from '../helpers/api-harness.js';
import { percentile } from './stats.js';

const JOBS = Number(process.env.COLDSTART_JOBS ?? 20);
const REGISTRATIONS = Number(process.env.COLDSTART_REGISTRATIONS ?? 5);

/** Production defaults, not the test cluster's quick ones. */
const PRODUCTION = {
  TIMESHARE_ROUND_INTERVAL_MS: '1000',
  TIMESHARE_ASSIGNMENT_POLL_MS: '2000',
  TIMESHARE_HEARTBEAT_MS: '5000',
  TIMESHARE_LEASE_MS: '10000',
  TIMESHARE_NODE_TIMEOUT_MS: '15000',
  LOG_LEVEL: 'warn',
};

const job = (name: string, pool: string) => ({
  name,
  pool,
  workflow: {
    model: { preset: 'tiny' },
    task: { name: 'addition', digits: 1 },
    steps: 1,
    promptsPerStep: 8,
    groupSize: 4,
    evalEvery: 1000,
    warmup: { maxSteps: 0 },
  },
});

interface Timeline {
  submitted: number;
  placed: number;
  running: number;
  firstStep: number;
}

async function timeline(c: Cluster, jobId: string): Promise<Timeline | null> {
  const r = await c.h.api.deps.db.pool.query(
    `SELECT (extract(epoch FROM j.created_at) * 1000)::float8 AS submitted,
            (SELECT extract(epoch FROM min(created_at)) * 1000 FROM job_events
              WHERE job_id = j.id AND type = 'job.placed')::float8 AS placed,
            (SELECT extract(epoch FROM min(created_at)) * 1000 FROM job_events
              WHERE job_id = j.id AND type = 'job.running')::float8 AS running,
            (SELECT extract(epoch FROM min(created_at)) * 1000 FROM metrics
              WHERE job_id = j.id AND step = 1 AND name = 'reward_mean')::float8 AS first_step,
            j.status
       FROM jobs j WHERE j.id = $1`,
    [jobId],
  );
  const row = r.rows[0];
  if (!row || row.status !== 'succeeded' || row.first_step === null) return null;
  return { submitted: row.submitted, placed: row.placed, running: row.running, firstStep: row.first_step };
}

const line = (label: string, xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const f = (v: number) => `${Math.round(v)} ms`.padStart(8);
  return `${label.padEnd(34)} p50 ${f(percentile(s, 50))}   p95 ${f(percentile(s, 95))}   max ${f(s.at(-1)!)}`;
};

async function submitToFirstStep(c: Cluster, t: TestTenant, pool: string, label: string): Promise<number[]> {
  const total: number[] = [];
  const phases = { placed: [] as number[], running: [] as number[], step: [] as number[] };
  for (let i = 0; i < JOBS; i++) {
    const id = (
      await t
        .as(c.h.http.post('/v1/jobs'))
        .send(job(`cold-${i}`, pool))
        .expect(201)
    ).body.id;
    const tl = await waitFor(`job ${i} to finish`, () => timeline(c, id), 120_000);
    total.push(tl.firstStep - tl.submitted);
    phases.placed.push(tl.placed - tl.submitted);
    phases.running.push(tl.running - tl.placed);
    phases.step.push(tl.firstStep - tl.running);
    // An idle pool: the finished job's process is gone and the node has settled.
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(`\n${label}: submit → first RL step, ${JOBS} jobs one at a time`);
  console.log(line('  submit → first RL step', total));
  console.log(line('    submit → placed (round)', phases.placed));
  console.log(line('    placed → running (daemon, fork)', phases.running));
  console.log(line('    running → step 1 reported', phases.step));
  return total;
}

async function registrationToRunning(c: Cluster, t: TestTenant): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < REGISTRATIONS; i++) {
    const pool = `cold-empty-${i}`;
    const id = (
      await t
        .as(c.h.http.post('/v1/jobs'))
        .send(job(`wait-${i}`, pool))
        .expect(201)
    ).body.id;
    const name = `cold-node-${i}`;
    await c.startWorker(name, 1, { pool });
    const tl = await waitFor(`job in ${pool}`, async () => {
      const r = await c.h.api.deps.db.pool.query(
        `SELECT (extract(epoch FROM n.registered_at) * 1000)::float8 AS registered,
                (SELECT extract(epoch FROM min(created_at)) * 1000 FROM job_events
                  WHERE job_id = $1 AND type = 'job.running')::float8 AS running
           FROM nodes n WHERE n.name = $2`,
        [id, name],
      );
      const row = r.rows[0];
      return row && row.running !== null ? row : null;
    });
    out.push(tl.running - tl.registered);
    await c.workers.get(name)!.kill('SIGTERM');
  }
  console.log(`\nnode registration → first job running, ${REGISTRATIONS} fresh daemons`);
  console.log(line('  registration → job.running', out));
  return out;
}

async function main() {
  const runs: { label: string; env: Record<string, string> }[] = [
    { label: 'current', env: {} },
    ...(process.env.COLDSTART_BASELINE === '1'
      ? [{ label: 'baseline (no spare job process)', env: { TIMESHARE_SPARE_RUNNER: 'off' } }]
      : []),
  ];
  const results: string[] = [];
  for (const run of runs) {
    const c = await startCluster({ env: { ...PRODUCTION, ...run.env } });
    try {
      const t = await c.h.createTenant('coldstart', { maxActiveJobs: 1000, maxConcurrentDevices: 1000 });
      await c.startWorker('cold-warm', 2, { pool: 'warm' });
      // Warm: the first job pays for loading the engine's code into the page cache.
      const warm = (await t.as(c.h.http.post('/v1/jobs')).send(job('warm-up', 'warm')).expect(201)).body.id;
      await waitFor('the warm-up job', () => timeline(c, warm), 120_000);
      const total = await submitToFirstStep(c, t, 'warm', run.label);
      const reg = run.label === 'current' ? await registrationToRunning(c, t) : [];
      const s = [...total].sort((a, b) => a - b);
      results.push(
        `${run.label}: p50 ${Math.round(percentile(s, 50))} ms, p95 ${Math.round(percentile(s, 95))} ms` +
          (reg.length
            ? `; registration → running p50 ${Math.round(
                percentile(
                  [...reg].sort((a, b) => a - b),
                  50,
                ),
              )} ms`
            : ''),
      );
    } finally {
      await c.close();
    }
  }
  console.log(`\n${results.join('\n')}\ntarget: p95 < 1000 ms submit → first RL step`);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
