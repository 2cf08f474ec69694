/**
 * `npx tsx worker-node/bench/outbox-drain.bench.ts`: how long a node's outbox takes to drain the
 * records an API outage left in it, against a real API (its own database and Redis prefix). 20 jobs
 * placed on the node, each with its start, 62 step reports (6 metrics, 3 profiled stages,
 * device-seconds), 6 checkpoint records and its finish, interleaved as the jobs ran: 1,400 records.
 * They are put while the API is "unreachable", then a second outbox (a restarted daemon) sends them
 * through the daemon's own client, timed from open to empty. Beside it, the same records applied
 * in-process straight to PostgreSQL (no HTTP), to tell the database's share from the round trips'.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../common/logger.js';
import { applyJobReport } from '../../common/jobs/job-report.js';
import { recordCheckpoint } from '../../common/jobs/reports.js';
import { finishJob, startJob } from '../../common/jobs/transitions.js';
import {
  checkpointReportSchema,
  jobReportSchema,
  type CheckpointReport,
  type JobReport,
} from '../../common/node-protocol/index.js';
import { startHarness, type Harness } from '../../test/helpers/api-harness.js';
import { dropIdleTemplates } from '../../test/helpers/database.js';
import { placeOnNode, registerTestNode } from '../../test/helpers/test-node.js';
import { runBench } from '../../test/bench/stats.js';
import { ControlPlaneClient } from '../control-plane-client.js';
import { deliverReports } from '../outbox-delivery.js';
import { ReportOutbox, type OutboxReport } from '../report-outbox.js';

const JOBS = 20;
const REPORTS = 62;
const CHECKPOINT_EVERY = 10;
const logger = createLogger('bench', 'silent');
/**
 * `single`: one record per request, as the outbox sent before batches (and still does to a control
 * plane without them); `batch`: as it sends now. Both by default, alternating, `--rounds` times, so
 * that each pair ran under the same load.
 */
type Mode = 'single' | 'batch';
const modes: Mode[] = process.argv.includes('--single')
  ? ['single']
  : process.argv.includes('--batch')
    ? ['batch']
    : ['single', 'batch'];
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 1;

function report(step: number, reportSeq: number, queueSeq: number): JobReport {
  return jobReportSchema.parse({
    queueSeq,
    reportSeq,
    deviceSeconds: 0.5,
    metrics: ['reward_mean', 'reward_std', 'loss', 'kl', 'clip_fraction', 'tokens'].map((name) => ({
      step,
      name,
      value: 0.5,
    })),
    profiles: ['generate', 'train', 'sync'].map((stage) => ({
      stage,
      step,
      seconds: 0.1,
      batch: 64,
      devices: 1,
      computeSeconds: 0.08,
    })),
  });
}

const checkpoint = (step: number, reportSeq: number, queueSeq: number): CheckpointReport =>
  checkpointReportSchema.parse({ queueSeq, reportSeq, step, sizeBytes: 1024, sha256: 'a'.repeat(64) });

/** Each job's records in its own order; the jobs' lists interleaved as they would have been put. */
function recordsOf(nodeId: string, runs: { jobId: string; queueSeq: number }[]): OutboxReport[] {
  const perJob = runs.map(({ jobId, queueSeq }) => {
    const out: OutboxReport[] = [{ kind: 'start', nodeId, jobId, body: { queueSeq, resumedFromStep: null } }];
    let seq = 0;
    for (let step = 1; step <= REPORTS; step++) {
      out.push({ kind: 'report', nodeId, jobId, body: report(step, ++seq, queueSeq) });
      if (step % CHECKPOINT_EVERY === 0)
        out.push({ kind: 'checkpoint', nodeId, jobId, body: checkpoint(step, ++seq, queueSeq) });
    }
    out.push({ kind: 'finish', nodeId, jobId, body: { queueSeq, outcome: 'succeeded', error: null } });
    return out;
  });
  const all: OutboxReport[] = [];
  for (let i = 0; perJob.some((l) => i < l.length); i++) for (const l of perJob) if (l[i]) all.push(l[i]!);
  return all;
}

async function placedJobs(h: Harness, nodeId: string, tag: string) {
  const tenant = await h.createTenant(`bench-${tag}`, { maxActiveJobs: 1000, maxConcurrentDevices: 1000 });
  const runs: { jobId: string; queueSeq: number }[] = [];
  for (let i = 0; i < JOBS; i++) {
    const created = await tenant
      .as(h.http.post('/v1/jobs'))
      .send({ name: `${tag}-${i}`, workflow: { task: { name: 'addition' } } })
      .expect(201);
    const jobId = created.body.id as string;
    runs.push({ jobId, queueSeq: await placeOnNode(h, nodeId, jobId) });
  }
  return runs;
}

/** Seconds for a restarted daemon's outbox to deliver `records`, left on disk by an earlier one. */
async function drain(h: Harness, nodeKey: string, records: OutboxReport[], mode: Mode): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'timeshare-outbox-bench-'));
  try {
    const down = new ReportOutbox({
      dir,
      send: () => Promise.reject(new Error('API unreachable')),
      isFinal: () => false,
      logger,
      backoffMs: { first: 60_000, max: 60_000 },
    });
    await down.open();
    for (const r of records) await down.put(r);
    down.close();
    const client = new ControlPlaneClient(h.api.url, nodeKey);
    const outbox = new ReportOutbox({
      dir,
      ...deliverReports(client, { batch: mode === 'batch' }),
      logger,
    });
    const t0 = performance.now();
    await outbox.open();
    const left = await outbox.idle(600_000);
    const seconds = (performance.now() - t0) / 1000;
    outbox.close();
    if (left) throw new Error(`${left} records not delivered`);
    return seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same records applied in-process, one call each, as the routes apply them. */
async function inProcess(h: Harness, records: OutboxReport[]): Promise<number> {
  const { pool } = h.api.deps.db;
  const t0 = performance.now();
  for (const r of records) {
    if (r.kind === 'start') await startJob(pool, r.jobId, r.nodeId, r.body.queueSeq, null);
    else if (r.kind === 'report') await applyJobReport(pool, r.jobId, r.nodeId, r.body);
    else if (r.kind === 'checkpoint') await recordCheckpoint(pool, r.jobId, r.nodeId, r.body);
    else await finishJob(pool, r.jobId, r.nodeId, r.body.queueSeq, 'succeeded', null);
  }
  return (performance.now() - t0) / 1000;
}

async function check(h: Harness, runs: { jobId: string }[]): Promise<void> {
  const ids = runs.map((r) => r.jobId);
  const { pool } = h.api.deps.db;
  const r = await pool.query(
    `SELECT count(*) FILTER (WHERE status = 'succeeded') AS done,
            (SELECT count(*) FROM metrics WHERE job_id = ANY($1)) AS metrics,
            (SELECT count(*) FROM checkpoints WHERE job_id = ANY($1)) AS checkpoints
       FROM jobs WHERE id = ANY($1)`,
    [ids],
  );
  const { done, metrics, checkpoints } = r.rows[0];
  const want = {
    done: JOBS,
    metrics: JOBS * REPORTS * 6,
    checkpoints: JOBS * ((REPORTS / CHECKPOINT_EVERY) | 0),
  };
  const got = { done: Number(done), metrics: Number(metrics), checkpoints: Number(checkpoints) };
  if (JSON.stringify(got) !== JSON.stringify(want))
    throw new Error(`not all applied: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

async function main(): Promise<void> {
  const h = await startHarness({ TIMESHARE_RATE_LIMIT_PER_SECOND: '0' });
  try {
    const node = await registerTestNode(h, 'bench-node');
    const rows: Record<string, string>[] = [];
    let n = 0;
    for (let round = 1; round <= ROUNDS; round++)
      for (const mode of modes) {
        const runs = await placedJobs(h, node.id, `${mode}-${round}`);
        const records = recordsOf(node.id, runs);
        n = records.length;
        const seconds = await drain(h, node.apiKey, records, mode);
        await check(h, runs);
        rows.push({
          round: String(round),
          mode,
          records: String(records.length),
          'drain, s': seconds.toFixed(2),
          'records/s': (records.length / seconds).toFixed(0),
        });
      }
    console.table(rows);
    const direct = await placedJobs(h, node.id, 'direct');
    const db = await inProcess(h, recordsOf(node.id, direct));
    await check(h, direct);
    console.log(
      `the same ${n} records applied in-process (no HTTP), one transaction each: ${db.toFixed(2)} s ` +
        `(${(n / db).toFixed(0)} records/s); load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
    );
  } finally {
    await h.close();
    await dropIdleTemplates();
  }
}

runBench(main);
