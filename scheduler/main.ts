/**
 * Entry point of the scheduler: `node dist/scheduler/main.js`. Several may run: one holds the
 * leader lease and runs the rounds (rounds/round-loop.ts: snapshot → schedule() → one fenced
 * transaction → announce), the others stand by and take over within the lease. Every instance
 * also sweeps lost nodes (liveness.ts; idempotent) and lapsed device-lock leases.
 */
import { randomUUID } from 'node:crypto';
import { readCapacity } from '../common/capacity.js';
import { readAllShares } from '../common/shares.js';
import os from 'node:os';
import { connectDatabase } from '../common/db.js';
import { DeviceLockService } from '../common/device-lock/index.js';
import { SchedulerWake } from '../common/jobs/scheduler-wake.js';
import { createLogger } from '../common/logger.js';
import { redisNames } from '../common/queues.js';
import { connectRedis } from '../common/redis.js';
import { loadSchedulerConfig, policyFrom } from './config.js';
import { configOrExit } from '../common/config.js';
import { sweepLostNodes } from './liveness.js';
import { ControlPlaneClock } from './liveness-clock.js';
import { startRoundLoop } from './rounds/round-loop.js';
import { createSchedulerMetrics } from '../common/metrics/scheduler.js';
import { serveMetrics } from '../common/metrics/serve.js';

const config = configOrExit('scheduler', () => loadSchedulerConfig());
const logger = createLogger('scheduler', config.LOG_LEVEL);
const names = redisNames(config.TIMESHARE_REDIS_PREFIX);
const db = connectDatabase(config.DATABASE_URL, 4, logger);
const redis = connectRedis(config.REDIS_URL, { log: logger });
const subscriber = connectRedis(config.REDIS_URL, { blocking: true, log: logger });
const wake = new SchedulerWake(redis, names, logger);
const holder = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
const metrics = createSchedulerMetrics(db.pool, {
  capacity: () => readCapacity(redis, names),
  shares: () => readAllShares(redis, names),
});
const metricsServer = await serveMetrics(
  metrics.registry,
  config.TIMESHARE_METRICS_PORT,
  config.TIMESHARE_METRICS_HOST,
);

const rounds = startRoundLoop({
  pool: db.pool,
  redis,
  subscriber,
  names,
  logger,
  options: {
    holder,
    policy: policyFrom(config),
    intervalMs: config.TIMESHARE_ROUND_INTERVAL_MS,
    leaseMs: config.TIMESHARE_LEADER_LEASE_MS,
    heartbeatTimeoutMs: config.TIMESHARE_NODE_TIMEOUT_MS,
    usageHalfLifeSeconds: config.TIMESHARE_USAGE_HALF_LIFE_HOURS * 3600,
    ...(config.TIMESHARE_FAULT ? { fault: config.TIMESHARE_FAULT } : {}),
  },
  onRound: metrics.roundDone,
});

// The leader is the instance whose round loop holds the lease (an epoch).
metrics.leadership(() => rounds.stats.epoch !== null);

// Since when this scheduler has reached the database at every sweep: a node's silence counts from
// then at most (liveness-clock.ts).
const livenessClock = new ControlPlaneClock();
const livenessTimer = setInterval(
  () => {
    sweepLostNodes({
      pool: db.pool,
      redis,
      names,
      wake,
      logger,
      timeoutMs: config.TIMESHARE_NODE_TIMEOUT_MS,
      clock: livenessClock,
      ...(config.TIMESHARE_FAULT ? { fault: config.TIMESHARE_FAULT } : {}),
    }).then(metrics.sweepDone, (err) => {
      metrics.sweepFailed();
      logger.warn({ err }, 'liveness sweep failed');
    });
  },
  Math.max(250, Math.floor(config.TIMESHARE_NODE_TIMEOUT_MS / 4)),
);

// Leases of holders that died (a killed job process or daemon) lapse here, and the next waiter gets
// the devices with a higher fencing token.
const locks = new DeviceLockService(redis, { prefix: names.lockPrefix });
const stopSweeper = locks.startSweeper(500, (err) => logger.warn({ err }, 'lock sweep failed'));
// With no job placed or running anywhere nothing can hold a device, so the first stages need not
// wait out the grace that follows a loss of Redis's state (common/device-lock/README.md). Unsure
// (the database unreachable): say nothing, and the grace applies.
await db.pool
  .query(`SELECT 1 FROM jobs WHERE status IN ('placed', 'running') LIMIT 1`)
  .then(async (r) => {
    if (r.rows.length === 0) await locks.declareFresh();
  })
  .catch((err: unknown) => logger.warn({ err }, 'could not tell whether any job holds devices'));

logger.info({ holder, policy: policyFrom(config) }, 'scheduler started');

async function shutdown(): Promise<void> {
  clearInterval(livenessTimer);
  stopSweeper();
  locks.close();
  await metricsServer?.close();
  await rounds.close();
  redis.disconnect();
  subscriber.disconnect();
  await db.close();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
