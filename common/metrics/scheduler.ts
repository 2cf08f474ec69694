/**
 * The scheduler's metrics. The cluster's state (jobs by status, queue depth and oldest wait per
 * pool, nodes by status) is read from PostgreSQL, the source of truth, at scrape time, and each
 * pool's capacity signal (devices wanted, idle) from the leader's last round — so every
 * scheduler replica reports the same values and a dashboard takes max() across them. What only this
 * process knows (its sweeps, whether it holds the leader lease, the rounds it ran as leader) is
 * counted here.
 */
import client from 'prom-client';
import type pg from 'pg';
import type { PoolCapacity } from '../capacity.js';

/**
 * `capacity` reads the leader's last capacity signal (common/capacity.ts, in Redis), so that every
 * replica exports the same values, as with the database gauges.
 */
export function createSchedulerMetrics(
  pool: Pick<pg.Pool, 'query'>,
  capacity: () => Promise<PoolCapacity[]> = async () => [],
) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'timeshare_scheduler_' });

  const jobs = new client.Gauge({
    name: 'timeshare_jobs',
    help: 'Jobs by pool and status (all tenants), from the database',
    labelNames: ['pool', 'status'] as const,
    registers: [registry],
    collect: () => collectOnce(),
  });
  const queueDepth = new client.Gauge({
    name: 'timeshare_queue_depth_jobs',
    help: 'Queued jobs per pool (paused ones left out: no round places them)',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect: () => collectOnce(),
  });
  const oldestWait = new client.Gauge({
    name: 'timeshare_queue_oldest_wait_seconds',
    help: 'How long the longest-waiting queued job of a pool has waited (paused ones left out)',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect: () => collectOnce(),
  });
  const nodes = new client.Gauge({
    name: 'timeshare_nodes',
    help: 'Worker nodes by pool and status (ready, draining, lost), from the database',
    labelNames: ['pool', 'status'] as const,
    registers: [registry],
    collect: () => collectOnce(),
  });
  const poolDevices = (name: string, help: string) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['pool'] as const,
      registers: [registry],
      collect: () => collectOnce(),
    });
  const wanted = poolDevices(
    'timeshare_pool_wanted_devices',
    'Devices a pool needs to run all of its work now (busy + queued); 0 = it may scale to zero',
  );
  const queuedDevices = poolDevices(
    'timeshare_pool_queued_devices',
    "Devices a pool's queued jobs want (jobs waiting on their quota excepted)",
  );
  const busy = poolDevices('timeshare_pool_busy_devices', 'Devices held by running and placed jobs');
  const idle = poolDevices('timeshare_pool_idle_devices', 'Devices on ready nodes that no job holds');
  let isLeader = () => false;
  new client.Gauge({
    name: 'timeshare_scheduler_leader',
    help: '1 while this scheduler process holds the leader lease, else 0',
    registers: [registry],
    collect() {
      this.set(isLeader() ? 1 : 0);
    },
  });
  const sweeps = new client.Counter({
    name: 'timeshare_scheduler_liveness_sweeps_total',
    help: 'Node liveness sweeps run, by result',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const requeued = new client.Counter({
    name: 'timeshare_scheduler_node_lost_requeues_total',
    help: 'Jobs sent back to the queue because their node was lost',
    registers: [registry],
  });
  // The leader's rounds: how long each phase took (the snapshot read grows with the cluster, the
  // decision with the queue, the transaction with what was decided) and what they decided.
  const roundSeconds = new client.Histogram({
    name: 'timeshare_scheduler_round_duration_seconds',
    help: "The leader's rounds by phase: read (the snapshot), schedule (the decision), apply (its transaction), publish (to Redis), total",
    labelNames: ['phase'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const placements = new client.Counter({
    name: 'timeshare_scheduler_placements_total',
    help: 'Jobs the leader placed',
    registers: [registry],
  });
  const notices = new client.Counter({
    name: 'timeshare_scheduler_preemption_notices_total',
    help: 'Preemption notices the leader gave running jobs',
    registers: [registry],
  });
  const scrapeErrors = new client.Counter({
    name: 'timeshare_scheduler_metrics_query_errors_total',
    help: 'Scrapes whose database reads failed (the gauges keep their last values)',
    registers: [registry],
    collect: () => collectOnce(),
  });

  // The database gauges are read together, once per scrape, whichever of them prom-client asks first.
  let reading: Promise<void> | null = null;
  function collectOnce(): Promise<void> {
    reading ??= readDatabase().finally(() => (reading = null));
    return reading;
  }
  async function readDatabase(): Promise<void> {
    try {
      const [byStatus, queued, byNode, pools] = await Promise.all([
        pool.query<{ pool: string; status: string; n: string }>(
          `SELECT pool, status::text AS status, count(*) AS n FROM jobs GROUP BY pool, status`,
        ),
        pool.query<{ pool: string; n: string; wait: number | null }>(
          `SELECT pool, count(*) AS n, extract(epoch FROM now() - min(queued_at))::float8 AS wait
             FROM jobs WHERE status = 'queued' AND paused_at IS NULL GROUP BY pool`,
        ),
        pool.query<{ pool: string; status: string; n: string }>(
          `SELECT p.name AS pool, n.status::text AS status, count(*) AS n
             FROM nodes n JOIN pools p ON p.id = n.pool_id GROUP BY p.name, n.status`,
        ),
        capacity(),
      ]);
      // reset() first: a pool or status that emptied must read 0 / vanish, not keep its last value.
      jobs.reset();
      for (const r of byStatus.rows) jobs.set({ pool: r.pool, status: r.status }, Number(r.n));
      queueDepth.reset();
      oldestWait.reset();
      for (const r of queued.rows) {
        queueDepth.set({ pool: r.pool }, Number(r.n));
        oldestWait.set({ pool: r.pool }, Math.max(0, r.wait ?? 0));
      }
      nodes.reset();
      for (const r of byNode.rows) nodes.set({ pool: r.pool, status: r.status }, Number(r.n));
      for (const g of [wanted, queuedDevices, busy, idle]) g.reset();
      for (const c of pools) {
        wanted.set({ pool: c.pool }, c.wantedDevices);
        queuedDevices.set({ pool: c.pool }, c.queuedDevices);
        busy.set({ pool: c.pool }, c.busyDevices);
        idle.set({ pool: c.pool }, c.idleDevices);
      }
    } catch {
      scrapeErrors.inc();
    }
  }
  return {
    registry,
    /** Where the leader gauge reads, at scrape time, whether this process leads. */
    leadership: (fn: () => boolean) => {
      isLeader = fn;
    },
    sweepDone: (requeuedJobs: number) => {
      sweeps.inc({ result: 'ok' });
      requeued.inc(requeuedJobs);
    },
    sweepFailed: () => sweeps.inc({ result: 'error' }),
    /** A round the leader ran (scheduler/rounds/round-loop.ts `RoundReport`): seconds by phase. */
    roundDone: (r: { seconds: Record<string, number>; placed: number; preempted: number }) => {
      for (const [phase, seconds] of Object.entries(r.seconds)) roundSeconds.observe({ phase }, seconds);
      placements.inc(r.placed);
      notices.inc(r.preempted);
    },
  };
}

export type SchedulerMetrics = ReturnType<typeof createSchedulerMetrics>;
