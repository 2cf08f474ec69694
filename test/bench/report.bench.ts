/**
 * `npm run bench:report`: what one node report of a training step costs the control plane as the
 * usage ledger grows (one row per report of every job). Each report (`applyJobReport`, the
 * statement the API runs for `POST /v1/nodes/{id}/jobs/{jobId}/report`: 6 metrics, 3 profiled
 * stages, device-seconds) is timed at 0, 1,000,000 and 3,000,000 ledger rows. Beside it, measured
 * in the same run on the same database, the charge as a report made it until 2026-11-28, bounded by
 * a sum over the ledger (usage-by-ledger-sum.ts; the amount is now kept on the job's row).
 */
import pg from 'pg';
import { SESSION_OPTIONS } from '../../common/db.js';
import { applyJobReport } from '../../common/jobs/job-report.js';
import { jobReportSchema } from '../../common/node-protocol/index.js';
import { createTestDatabase, dropIdleTemplates } from '../helpers/database.js';
import { percentile, runBench } from './stats.js';
import { recordUsageByLedgerSum } from './usage-by-ledger-sum.js';

const JOBS = 1000;
const REPORTS = 50;
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

async function main(): Promise<void> {
  console.log(
    `bench:report — a node report of a step against the size of the usage ledger (${REPORTS} reports each)`,
  );
  const db = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 4, options: SESSION_OPTIONS });
  pool.on('error', () => undefined);
  const rows: Record<string, string>[] = [];
  try {
    const t = await pool.query(`INSERT INTO tenants (name) VALUES ('bench') RETURNING id`);
    const tenantId = t.rows[0].id as string;
    await pool.query(`INSERT INTO quotas (tenant_id) VALUES ($1)`, [tenantId]);
    const p = await pool.query(`INSERT INTO pools (name, device_type) VALUES ('bench', 'cpu') RETURNING id`);
    const node = await pool.query(`INSERT INTO nodes (name, pool_id) VALUES ('n', $1) RETURNING id`, [
      p.rows[0].id,
    ]);
    const nodeId = node.rows[0].id as string;
    await pool.query(
      `INSERT INTO jobs (tenant_id, name, spec, status, pool, devices, node_id, placement, placed_at, run_started_at)
       SELECT $1, 'j' || i, '{}', 'running', 'bench', 1, $2, '{"devices": [0]}', now() - interval '1 day', now() - interval '1 day'
         FROM generate_series(1, $3::int) i`,
      [tenantId, nodeId, JOBS],
    );
    const jobs = (await pool.query(`SELECT id FROM jobs ORDER BY id`)).rows.map((r) => r.id as string);
    let seq = 0;
    let step = 0;
    for (const ledger of [0, 1_000_000, 3_000_000]) {
      const have = Number((await pool.query(`SELECT count(*) AS n FROM usage_ledger`)).rows[0].n);
      if (ledger > have)
        await pool.query(
          `INSERT INTO usage_ledger (tenant_id, job_id, device_seconds, running_seconds, switching_seconds, idle_seconds, period_start)
           SELECT $1, j.id, 0.001, 0.001, 0, 0, usage_period_start() FROM generate_series(1, $2::int) g CROSS JOIN jobs j`,
          [tenantId, Math.ceil((ledger - have) / JOBS)],
        );
      await pool.query('VACUUM ANALYZE usage_ledger');
      const report: number[] = [];
      const oldSum: number[] = [];
      step++;
      seq++;
      for (let i = 0; i < REPORTS; i++) {
        const jobId = jobs[i]!;
        const body = jobReportSchema.parse({
          queueSeq: 0,
          reportSeq: seq,
          deviceSeconds: 1,
          metrics: ['reward_mean', 'reward_std', 'loss', 'kl', 'clip_fraction', 'tokens'].map((name) => ({
            step,
            name,
            value: 0.5,
          })),
          profiles: ['generate', 'train', 'sync'].map((stage) => ({
            stage,
            step,
            seconds: 0.3,
            batch: 512,
            devices: 1,
            onloadSeconds: 0.01,
            offloadSeconds: 0.01,
          })),
        });
        let s = performance.now();
        const r = await applyJobReport(pool, jobId, nodeId, body);
        report.push(performance.now() - s);
        if (!r.applied) throw new Error('a report was not applied');
        // On another job, so that each statement charges a job that has not reached its bound.
        s = performance.now();
        await recordUsageByLedgerSum(pool, jobs[JOBS - 1 - i]!, 1);
        oldSum.push(performance.now() - s);
      }
      report.sort((a, b) => a - b);
      oldSum.sort((a, b) => a - b);
      const n = Number((await pool.query(`SELECT count(*) AS n FROM usage_ledger`)).rows[0].n);
      rows.push({
        'ledger rows': n.toLocaleString('en'),
        'report p50 / p99': `${fmt(percentile(report, 50))} / ${fmt(percentile(report, 99))}`,
        'its charge by a ledger sum (before), p50 / p99': `${fmt(percentile(oldSum, 50))} / ${fmt(percentile(oldSum, 99))}`,
      });
    }
    console.table(rows);
    console.log(
      `job row versions a report writes: ${(await rowVersionsPerReport(db.url, jobs, nodeId, step + 1, seq + 1)).toFixed(2)}`,
    );
  } finally {
    await pool.end();
    await db.drop();
    await dropIdleTemplates();
  }
}

/**
 * Updates of job rows per report, from PostgreSQL's table statistics around 20 reports made on a
 * connection of their own (its statistics flushed on demand): each update leaves a row version for
 * vacuum, on a row as wide as a job's.
 */
async function rowVersionsPerReport(url: string, jobs: string[], nodeId: string, step: number, seq: number) {
  const one = new pg.Pool({ connectionString: url, max: 1, options: SESSION_OPTIONS });
  one.on('error', () => undefined);
  const flushed = async () => {
    await one.query('SELECT pg_stat_force_next_flush()');
    await one.query('SELECT 1');
    const r = await one.query(
      `SELECT pg_stat_clear_snapshot(), (SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'jobs') AS n`,
    );
    return Number(r.rows[0].n);
  };
  try {
    const before = await flushed();
    const N = 20;
    for (let i = 0; i < N; i++)
      await applyJobReport(
        one,
        jobs[i]!,
        nodeId,
        jobReportSchema.parse({
          queueSeq: 0,
          reportSeq: seq,
          deviceSeconds: 1,
          metrics: [{ step, name: 'loss', value: 0.5 }],
          profiles: [{ stage: 'train', step, seconds: 0.3, batch: 512, devices: 1 }],
        }),
      );
    return ((await flushed()) - before) / N;
  } finally {
    await one.end();
  }
}

runBench(main);
