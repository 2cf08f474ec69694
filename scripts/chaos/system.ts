/**
 * The system under test: a database and a Redis prefix of its own (the tests' helpers), an API
 * process, two schedulers (one leads, one stands by) and worker daemons with virtual devices, all
 * with timeouts and intervals short enough that a soak of minutes sees many recoveries.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/database.js';
import { deleteKeys, testRedisUrl } from '../../test/helpers/redis.js';
import { testEnv } from '../../test/helpers/api-harness.js';
import { freePort } from '../../test/helpers/processes.js';
import { ApiClient, ApiOutages } from './api-client.js';
import { sleep, type Clock } from './clock.js';
import { procState } from './procfs.js';
import { alive, ProcessLauncher, type Proc } from './processes.js';
import type { Violations } from './violations.js';

export interface Worker {
  name: string;
  key: string;
  proc?: Proc;
  nodeId?: string;
  /** SIGSTOPped by the soak: a kill must SIGCONT it first, and so must the end of the soak */
  paused: boolean;
}

export interface SystemOptions {
  seed: number;
  devices: number;
  nodeTimeoutMs: number;
  /** where each process's log, the daemons' outboxes and env.json go */
  logDir: string;
}

interface Parts {
  db: TestDatabase;
  sql: pg.Pool;
  redis: Redis;
  prefix: string;
  env: Record<string, string>;
}

export class SystemUnderTest {
  /** Set once the soak winds down: a scheduler or daemon killed after that is not started again. */
  stopping = false;
  api: Proc | undefined;
  readonly schedulers: (Proc | undefined)[] = [undefined, undefined];
  readonly workers: Worker[] = [];
  readonly db: TestDatabase;
  readonly sql: pg.Pool;
  readonly redis: Redis;
  readonly prefix: string;
  readonly env: Record<string, string>;
  readonly client: ApiClient;
  readonly adminKey: string;
  private readonly launcher: ProcessLauncher;

  private constructor(
    parts: Parts,
    private readonly opts: SystemOptions,
    private readonly clock: Clock,
    violations: Violations,
  ) {
    ({ db: this.db, sql: this.sql, redis: this.redis, prefix: this.prefix, env: this.env } = parts);
    this.client = new ApiClient(this.env.TIMESHARE_API_URL!, new ApiOutages(), violations);
    this.adminKey = this.env.TIMESHARE_ADMIN_KEY!;
    this.launcher = new ProcessLauncher(opts.logDir, clock);
  }

  /** The database, Redis and the environment every process gets; no process yet. */
  static async create(
    opts: SystemOptions,
    prefix: string,
    clock: Clock,
    violations: Violations,
  ): Promise<SystemUnderTest> {
    // Before the database, so that nothing can fail between creating it and owning it.
    const port = await freePort();
    const db = await createTestDatabase();
    const apiUrl = `http://127.0.0.1:${port}`;
    const env = {
      ...testEnv(db.url, prefix, { PORT: String(port), LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'warn' }),
      TIMESHARE_API_URL: apiUrl,
      TIMESHARE_NODE_TIMEOUT_MS: String(opts.nodeTimeoutMs),
      TIMESHARE_MAX_JOBS_PER_DEVICE: '2',
      TIMESHARE_ROUND_INTERVAL_MS: '250',
      TIMESHARE_HEARTBEAT_MS: '500',
      TIMESHARE_ASSIGNMENT_POLL_MS: '500',
      TIMESHARE_LEASE_MS: '3000',
      TIMESHARE_LEADER_LEASE_MS: '3000',
      TIMESHARE_MIN_RUN_SECONDS: '2',
      TIMESHARE_PREEMPT_GRACE_SECONDS: '10',
    };
    const sql = new pg.Pool({ connectionString: db.url, max: 3 });
    const redis = new Redis(testRedisUrl());
    const system = new SystemUnderTest({ db, sql, redis, prefix, env }, opts, clock, violations);
    writeFileSync(
      path.join(opts.logDir, 'env.json'),
      JSON.stringify({ seed: opts.seed, prefix, db: db.name, env }, null, 2),
    );
    return system;
  }

  get everyPid(): ReadonlySet<number> {
    return this.launcher.everyPid;
  }

  startApi(): void {
    this.api = this.launcher.start('api', 'api/main.ts', this.env);
  }

  async waitApi(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        const r = await fetch(`${this.client.url}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (r.ok) return;
      } catch {
        // not up yet
      }
      await sleep(150);
    }
    throw new Error('API did not come up');
  }

  startScheduler(i: number): void {
    this.schedulers[i] = this.launcher.start(`scheduler-${i}`, 'scheduler/main.ts', this.env);
  }

  startWorker(w: Worker): void {
    w.proc = this.launcher.start(
      `worker-${w.name}`,
      'worker-node/main.ts',
      {
        ...this.env,
        TIMESHARE_NODE_KEY: w.key,
        TIMESHARE_NODE_NAME: w.name,
        TIMESHARE_OUTBOX_DIR: path.join(this.opts.logDir, 'outbox', w.name),
      },
      [
        '--virtual-devices',
        String(this.opts.devices),
        '--device-memory',
        String(256 * 1024 * 1024),
        '--threads-per-device',
        '1',
      ],
    );
    w.paused = false;
  }

  async startApiAndSchedulers(): Promise<void> {
    this.startApi();
    await this.waitApi();
    this.startScheduler(0);
    this.startScheduler(1);
  }

  /** Each daemon under a node key of its own; returns once every one is registered and ready. */
  async startWorkers(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const name = `node-${i}`;
      const k = await this.client.call('POST', '/v1/node-keys', this.adminKey, { name });
      const w: Worker = { name, key: k.body.apiKey, paused: false };
      this.workers.push(w);
      this.startWorker(w);
    }
    for (let i = 0; i < 300; i++) {
      const n = await this.client.call('GET', '/v1/nodes?limit=100', this.adminKey);
      for (const node of n.body.data as { id: string; name: string; status: string }[]) {
        const w = this.workers.find((x) => x.name === node.name);
        if (w && node.status === 'ready') w.nodeId = node.id;
      }
      if (this.workers.every((w) => w.nodeId)) break;
      await sleep(200);
    }
    if (!this.workers.every((w) => w.nodeId)) throw new Error('workers did not register');
    this.clock.log(`nodes: ${this.workers.map((w) => `${w.name}=${w.nodeId}`).join(' ')}`);
  }

  /** The pid in the lease holder's name (host:pid:…); null while no lease is current. */
  async leaderPid(): Promise<number | null> {
    const r = await this.sql.query(
      `SELECT holder FROM scheduler_leases WHERE expires_at > clock_timestamp()`,
    );
    const h = r.rows[0]?.holder as string | undefined;
    const m = h ? /:(\d+):/.exec(h) : null;
    return m ? Number(m[1]) : null;
  }

  /**
   * Kills everything, then deletes the database, the prefix's keys and the stored checkpoints.
   * jobPids: the job processes the lock timeline named; they should end with their daemon's IPC,
   * and any that did not are killed here.
   */
  async stop(jobPids: Iterable<number>): Promise<void> {
    this.stopping = true;
    for (const w of this.workers) if (w.proc && alive(w.proc)) w.proc.child.kill('SIGCONT');
    const all = [this.api, ...this.schedulers, ...this.workers.map((w) => w.proc)].filter(alive) as Proc[];
    for (const p of all) p.child.kill('SIGKILL');
    await Promise.all(all.map((p) => p.exited));
    await sleep(500);
    for (const pid of [...jobPids, ...this.everyPid]) {
      const st = procState(pid);
      if (st && st !== 'Z') {
        this.clock.log(`leftover process ${pid}: killing`);
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
    await this.sql.end().catch(() => {});
    this.redis.disconnect();
    await this.db.drop().catch((e) => this.clock.log(`drop failed: ${e}`));
    await deleteKeys(this.prefix).catch(() => {});
    rmSync(this.env.TIMESHARE_STORAGE_ROOT ?? '/nonexistent', { recursive: true, force: true });
  }
}
