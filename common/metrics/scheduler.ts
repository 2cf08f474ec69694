/**
 * The scheduler's metrics. The cluster's state (jobs by status, queue depth, oldest wait and queued
 * jobs by wait reason per pool, nodes by status, the leader lease's epoch) is read from PostgreSQL,
 * the source of truth, at scrape time, and each pool's capacity signal (devices wanted, idle) and
 * each tenant's share and entitlement from the leader's last round, in Redis — so every scheduler
 * replica reports the same values and a dashboard takes max() across them. What only this process
 * knows (its sweeps, whether it holds the leader lease, the rounds it ran as leader) is counted here.
 */
import client from 'prom-client';
import type pg from 'pg';
import type { PoolCapacity } from '../capacity.js';
import type { TenantPoolShare } from '../shares.js';

/**
 * Why the leader gives a running job a preemption notice (scheduler/core/types.ts
 * `PreemptDecision['reason']`; scheduler/main.ts, which hands the round loop's reports to
 * `roundDone`, does not compile if that gains one this list lacks). Each starts at 0, so that rate() sees a reason's first notice.
 */
export const preemptionReasons = [
  'priority',
  'reclaim',
  'aging',
  'shrink',
  'replan',
  'compact',
  'spread',
  'pause',
  'drain',
] as const;
export type PreemptionReason = (typeof preemptionReasons)[number];

/** The leader lease's row in `scheduler_leases` (scheduler/rounds/leader.ts `LEASE_NAME`). */
const LEASE_NAME = 'scheduler';

/** What a scrape reads from the leader's last round, in Redis (common/capacity.ts, common/shares.ts). */
export interface RoundSources {
  capacity?: () => Promise<PoolCapacity[]>;
  shares?: () => Promise<TenantPoolShare[]>;
}

/** A round the leader ran (scheduler/rounds/round-loop.ts `RoundReport`). */
export interface RoundFigures {
  seconds: Record<string, number>;
  placed: number;
  /** The reason of each notice the round committed. */
  noticeReasons: readonly PreemptionReason[];
}

export function createSchedulerMetrics(pool: Pick<pg.Pool, 'query'>, sources: RoundSources = {}) {
  const capacity = sources.capacity ?? (async () => []);
  const shares = sources.shares ?? (async () => []);
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
  const waiting = new client.Gauge({
    name: 'timeshare_queue_waiting_jobs',
    help:
      'Queued jobs per pool by why they wait, the waitReason the last round stored (capacity, quota, fair_share, …; ' +
      'none: no round has seen the job yet), from the database; paused ones left out',
    labelNames: ['pool', 'reason'] as const,
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
  // A gauge of its own rather than a `cordoned` label on timeshare_nodes: a cordon is a subset of
  // the nodes of each status, not another status, and every replica reports the same figures, so
  // the dashboards and alerts take max by (pool, status) of timeshare_nodes; a label splitting each
  // series in two would make those read the larger half instead of the count. Same labels, so that
  // timeshare_nodes_cordoned / timeshare_nodes is the share of a pool's nodes taken out of service.
  const cordonedNodes = new client.Gauge({
    name: 'timeshare_nodes_cordoned',
    help:
      'Worker nodes an admin cordoned (POST /v1/nodes/{id}/cordon; evicting ones included), by pool and ' +
      'status, from the database: a subset of timeshare_nodes',
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
  const idle = poolDevices(
    'timeshare_pool_idle_devices',
    'Devices on ready, uncordoned nodes that no job holds',
  );
  // Tenants are created by an admin, so a tenant label is bounded; by name, which is unique and
  // never changes, rather than by id (a UUID nobody reads, and an unbounded label by the linter).
  const tenantGauge = (name: string, help: string) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['pool', 'tenant'] as const,
      registers: [registry],
      collect: () => collectOnce(),
    });
  const tenantShare = tenantGauge(
    'timeshare_tenant_share_ratio',
    "Dominant fraction of a pool a tenant holds (0..1, not divided by its weight), from the leader's last round",
  );
  const tenantEntitlement = tenantGauge(
    'timeshare_tenant_entitlement_ratio',
    "Fraction of a pool a tenant's weight entitles it to among the tenants wanting devices (0..1), from the leader's last round",
  );
  const tenantDevices = tenantGauge(
    'timeshare_tenant_held_devices',
    "Devices a tenant's jobs hold in a pool, from the leader's last round",
  );
  const tenantDemand = tenantGauge(
    'timeshare_tenant_queued_devices',
    "Devices a tenant's queued jobs want in a pool, from the leader's last round",
  );
  const leaderEpoch = new client.Gauge({
    name: 'timeshare_scheduler_leader_epoch',
    help: "The leader lease's fencing epoch, from the database: it grows by one with every change of leader",
    registers: [registry],
    collect: () => collectOnce(),
  });
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
    help: 'Preemption notices the leader gave running jobs, by reason (scheduler/core/types.ts PreemptDecision)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of preemptionReasons) notices.inc({ reason }, 0);
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
      const [byStatus, queued, byReason, byNode, lease, tenants, pools, tenantShares] = await Promise.all([
        pool.query<{ pool: string; status: string; n: string }>(
          `SELECT pool, status::text AS status, count(*) AS n FROM jobs GROUP BY pool, status`,
        ),
        pool.query<{ pool: string; n: string; wait: number | null }>(
          `SELECT pool, count(*) AS n, extract(epoch FROM now() - min(queued_at))::float8 AS wait
             FROM jobs WHERE status = 'queued' AND paused_at IS NULL GROUP BY pool`,
        ),
        pool.query<{ pool: string; reason: string; n: string }>(
          `SELECT pool, coalesce(wait_reason, 'none') AS reason, count(*) AS n
             FROM jobs WHERE status = 'queued' AND paused_at IS NULL GROUP BY 1, 2`,
        ),
        pool.query<{ pool: string; status: string; n: string; cordoned: string }>(
          `SELECT p.name AS pool, n.status::text AS status, count(*) AS n,
                  count(*) FILTER (WHERE n.cordoned_at IS NOT NULL) AS cordoned
             FROM nodes n JOIN pools p ON p.id = n.pool_id GROUP BY p.name, n.status`,
        ),
        pool.query<{ epoch: string }>(`SELECT epoch FROM scheduler_leases WHERE name = $1`, [LEASE_NAME]),
        pool.query<{ id: string; name: string }>(`SELECT id::text AS id, name FROM tenants`),
        capacity(),
        shares(),
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
      waiting.reset();
      for (const r of byReason.rows) waiting.set({ pool: r.pool, reason: r.reason }, Number(r.n));
      leaderEpoch.reset();
      if (lease.rows[0]) leaderEpoch.set(Number(lease.rows[0].epoch));
      nodes.reset();
      cordonedNodes.reset();
      for (const r of byNode.rows) {
        nodes.set({ pool: r.pool, status: r.status }, Number(r.n));
        // 0 where none is cordoned, rather than no series: an alert on it then sees the first cordon.
        cordonedNodes.set({ pool: r.pool, status: r.status }, Number(r.cordoned));
      }
      for (const g of [wanted, queuedDevices, busy, idle]) g.reset();
      for (const c of pools) {
        wanted.set({ pool: c.pool }, c.wantedDevices);
        queuedDevices.set({ pool: c.pool }, c.queuedDevices);
        busy.set({ pool: c.pool }, c.busyDevices);
        idle.set({ pool: c.pool }, c.idleDevices);
      }
      const tenantName = new Map(tenants.rows.map((t) => [t.id, t.name]));
      for (const g of [tenantShare, tenantEntitlement, tenantDevices, tenantDemand]) g.reset();
      for (const s of tenantShares) {
        const labels = { pool: s.pool, tenant: tenantName.get(s.tenantId) ?? s.tenantId };
        tenantShare.set(labels, s.share);
        tenantEntitlement.set(labels, s.entitlement);
        tenantDevices.set(labels, s.devices);
        tenantDemand.set(labels, s.demand);
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
    /** A round the leader ran: seconds by phase, its placements, and its notices by reason. */
    roundDone: (r: RoundFigures) => {
      for (const [phase, seconds] of Object.entries(r.seconds)) roundSeconds.observe({ phase }, seconds);
      placements.inc(r.placed);
      for (const reason of r.noticeReasons) notices.inc({ reason });
    },
  };
}

export type SchedulerMetrics = ReturnType<typeof createSchedulerMetrics>;
