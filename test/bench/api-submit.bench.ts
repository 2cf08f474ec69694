/**
 * `npm run bench:api`: 10,000 job submissions at concurrency 32 through the real API process
 * (HTTP + JWT auth + zod validation + the PostgreSQL admission statement + BullMQ enqueue), next to
 * the same number of raw BullMQ `Queue.add` calls measured in the same run as the baseline.
 * Target on 2 cores: ≥ 1,500 submissions/s and p99 < 50 ms.
 */
import { Queue } from 'bullmq';
import { Pool } from 'undici';
import { apiNodeFlags } from '../../api/node-flags.js';
import { createTestDatabase, dropIdleTemplates } from '../helpers/database.js';
import { deleteKeys, testPrefix, testRedisUrl } from '../helpers/redis.js';
import { testEnv } from '../helpers/api-harness.js';
import { freePort, startProcess, waitForHttp } from '../helpers/processes.js';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import { fmt, runConcurrent, type RunResult } from './stats.js';

const TICK = 100; // clock ticks per second (Linux USER_HZ)

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICK;
  } catch {
    return 0;
  }
}

/** The process and its direct children (the API's cluster workers). */
function withChildren(pid: number): number[] {
  const kids = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [pid, ...kids];
}

/**
 * Where the CPU goes, per submission, across every process on the path: the API, the PostgreSQL
 * backends serving it, Redis, and this load generator. Unlike throughput, these figures barely
 * move when other work shares the machine; 2 cores divided by their sum bounds submissions/s.
 */
async function cpuSnapshot(apiPid: number, dbName: string, redis: Redis) {
  const c = new pg.Client({
    connectionString: process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  });
  await c.connect();
  const pids = (await c.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [dbName])).rows.map(
    (r) => r.pid as number,
  );
  await c.end();
  const info = await redis.info('cpu');
  const redisCpu = ['used_cpu_sys', 'used_cpu_user'].reduce(
    (t, k) => t + Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? 0),
    0,
  );
  const self = process.cpuUsage();
  return {
    api: withChildren(apiPid).reduce((t, p) => t + cpuOf(p), 0),
    postgres: pids.reduce((t, p) => t + cpuOf(p), 0),
    redis: redisCpu,
    client: (self.user + self.system) / 1e6,
  };
}

const TOTAL = Number(process.env.BENCH_TOTAL ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const TENANTS = 4;
// The API as deployed by default (TIMESHARE_API_WORKERS=1). On 2 cores shared with PostgreSQL,
// Redis and the load generator, one process beats two: all 32 connections feed one admission
// group at a time, so groups are twice as big and each submission costs less (README figures).
const API_WORKERS = process.env.BENCH_API_WORKERS ?? '1';

// undici: the lightest well-kept HTTP/1.1 client for Node. The load generator shares the 2 cores
// with the system under test, so every microsecond it spends is taken from the API.
let pool: Pool;

async function post(path: string, token: string, body: string): Promise<number> {
  const res = await pool.request({
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
  await res.body.dump();
  return res.statusCode;
}

/** Admission calls so far and their mean size, from the API's own histogram on /metrics. */
async function admissionBatches(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  const count = value(/^timeshare_api_admission_batch_size_count(?:\{[^}]*\})? (\S+)$/m);
  const sum = value(/^timeshare_api_admission_batch_size_sum(?:\{[^}]*\})? (\S+)$/m);
  const alone = value(/^timeshare_api_admission_batch_size_bucket\{le="1"\} (\S+)$/m);
  return { count, mean: sum / count, alonePct: (100 * alone) / count };
}

async function json(url: string, init: RequestInit) {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init.method} ${url} → ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, string>>;
}

function line(label: string, r: RunResult) {
  return `${label.padEnd(34)} ${fmt(r.perSecond, 0).padStart(7)}/s   p50 ${fmt(r.p50, 2).padStart(6)} ms   p99 ${fmt(r.p99, 2).padStart(6)} ms   max ${fmt(r.max, 1).padStart(6)} ms   errors ${r.errors}`;
}

async function main() {
  const db = await createTestDatabase();
  const prefix = testPrefix();
  const port = await freePort();
  const env = testEnv(db.url, prefix, {
    PORT: String(port),
    LOG_LEVEL: 'warn',
    TIMESHARE_DB_POOL_SIZE: '16',
    TIMESHARE_API_WORKERS: API_WORKERS,
  });
  const url = `http://127.0.0.1:${port}`;
  pool = new Pool(url, { connections: CONCURRENCY });
  // BENCH_PROFILE_DIR=dir writes a V8 CPU profile of the API process there.
  const profile = process.env.BENCH_PROFILE_DIR;
  const api = startProcess('api/main.ts', env, [
    ...apiNodeFlags,
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
  ]);
  const queue = new Queue('baseline', { connection: { url: testRedisUrl() }, prefix: `${prefix}:baseline` });
  try {
    await waitForHttp(`${url}/readyz`, api);
    const admin = { Authorization: `Bearer ${env.TIMESHARE_ADMIN_KEY}`, 'Content-Type': 'application/json' };
    const tokens: string[] = [];
    for (let i = 0; i < TENANTS; i++) {
      const t = await json(`${url}/v1/tenants`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: `bench-${i}` }),
      });
      await json(`${url}/v1/tenants/${t.id}/quota`, {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ maxActiveJobs: TOTAL }),
      });
      const tok = await json(`${url}/v1/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ apiKey: t.apiKey }),
      });
      tokens.push(tok.token!);
    }
    const body = (i: number) =>
      JSON.stringify({
        name: `bench-${i}`,
        priority: 'normal',
        resources: { devices: 1 },
        workflow: {
          algorithm: 'grpo',
          task: { name: 'addition', digits: 2 },
          steps: 100,
          promptsPerStep: 64,
        },
      });

    // Warm-up: JIT, connection pools, PostgreSQL plan cache.
    await runConcurrent(
      500,
      CONCURRENCY,
      async (i) => (await post('/v1/jobs', tokens[i % TENANTS]!, body(i))) === 201,
    );

    const probe = new Redis(testRedisUrl());
    const cpu0 = await cpuSnapshot(api.child.pid!, db.name, probe);
    const apiRun = await runConcurrent(TOTAL, CONCURRENCY, async (i) => {
      return (await post('/v1/jobs', tokens[i % TENANTS]!, body(i))) === 201;
    });
    const cpu1 = await cpuSnapshot(api.child.pid!, db.name, probe);
    const batches = await admissionBatches(url);
    probe.disconnect();
    const bullRun = await runConcurrent(TOTAL, CONCURRENCY, async (i) => {
      await queue.add(
        'job',
        { jobId: `j${i}`, tenantId: 't', queueSeq: 0 },
        { jobId: `j${i}-q0`, removeOnComplete: true },
      );
      return true;
    });

    console.log(
      `\nbench:api — ${TOTAL} submissions, concurrency ${CONCURRENCY}, ${TENANTS} tenants, ${API_WORKERS} API worker process(es)\n`,
    );
    console.log(line('POST /v1/jobs (full path)', apiRun));
    console.log(line('baseline: BullMQ Queue.add', bullRun));
    console.log(`\nAPI throughput / raw BullMQ throughput: ${fmt(apiRun.perSecond / bullRun.perSecond, 2)}×`);
    const per = (k: keyof typeof cpu0) => ((cpu1[k] - cpu0[k]) / TOTAL) * 1000;
    const total = per('api') + per('postgres') + per('redis') + per('client');
    console.log(
      `CPU per submission: api ${fmt(per('api'), 3)} ms, postgres ${fmt(per('postgres'), 3)} ms, redis ${fmt(per('redis'), 3)} ms, ` +
        `load generator ${fmt(per('client'), 3)} ms; total ${fmt(total, 3)} ms → at most ${fmt(2000 / total, 0)}/s on 2 idle cores`,
    );
    console.log(
      `admission calls: ${batches.count} for ${TOTAL + 500} submissions (mean ${fmt(batches.mean, 1)} per call; ${fmt(batches.alonePct, 0)}% of calls alone)`,
    );
    console.log(
      `targets: ≥ 1500 submissions/s (${apiRun.perSecond >= 1500 ? 'met' : 'NOT met'}), p99 < 50 ms (${apiRun.p99 < 50 ? 'met' : 'NOT met'})`,
    );
    if (apiRun.errors) process.exitCode = 1;
  } finally {
    await api.kill('SIGTERM');
    await queue.close();
    await db.drop();
    await dropIdleTemplates();
    await deleteKeys(prefix);
    await pool?.close();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
