/**
 * Entry point of the scheduler: `node dist/scheduler/main.js`.
 *
 * Today: the minimal placement path (first fit with time-sharing, placement/), node liveness
 * (liveness.ts) and the device-lock sweeper. The global scheduler (fair share, cost model,
 * re-planning, preemption, leader election) replaces the placement path in its own issue.
 */
import { connectDatabase } from '../common/db.js';
import { JobQueue } from '../common/jobs/queue.js';
import { createLogger } from '../common/logger.js';
import { redisNames } from '../common/queues.js';
import { connectRedis } from '../common/redis.js';
import { loadSchedulerConfig } from './config.js';
import { sweepLostNodes } from './liveness.js';
import { startPlacementConsumer } from './placement/consumer.js';
import { DeviceLockService } from '../common/device-lock/index.js';

const config = loadSchedulerConfig();
const logger = createLogger('scheduler', config.LOG_LEVEL);
const names = redisNames(config.TIMESHARE_REDIS_PREFIX);
const db = connectDatabase(config.DATABASE_URL, 4);
const redis = connectRedis(config.REDIS_URL);
const blocking = connectRedis(config.REDIS_URL, { blocking: true });
const queue = new JobQueue(connectRedis(config.REDIS_URL, { blocking: true }), names);

const placement = startPlacementConsumer({
  pool: db.pool,
  redis,
  blocking,
  names,
  logger,
  options: {
    maxJobsPerDevice: config.TIMESHARE_MAX_JOBS_PER_DEVICE,
    heartbeatTimeoutMs: config.TIMESHARE_NODE_TIMEOUT_MS,
    retryMs: config.TIMESHARE_PLACEMENT_RETRY_MS,
    lockMs: config.TIMESHARE_PLACEMENT_LOCK_MS,
    ...(config.TIMESHARE_FAULT ? { fault: config.TIMESHARE_FAULT } : {}),
  },
});

const livenessTimer = setInterval(
  () => {
    sweepLostNodes({
      pool: db.pool,
      redis,
      names,
      queue,
      logger,
      timeoutMs: config.TIMESHARE_NODE_TIMEOUT_MS,
    }).catch((err) => logger.warn({ err }, 'liveness sweep failed'));
  },
  Math.max(250, Math.floor(config.TIMESHARE_NODE_TIMEOUT_MS / 4)),
);

// Leases of holders that died (a killed job process or daemon) lapse here, and the next waiter gets
// the devices with a higher fencing token.
const locks = new DeviceLockService(redis, { prefix: names.lockPrefix });
const stopSweeper = locks.startSweeper(500, (err) => logger.warn({ err }, 'lock sweep failed'));

logger.info({ maxJobsPerDevice: config.TIMESHARE_MAX_JOBS_PER_DEVICE }, 'scheduler started');

async function shutdown(): Promise<void> {
  clearInterval(livenessTimer);
  stopSweeper();
  locks.close();
  await placement.close();
  await queue.close();
  redis.disconnect();
  blocking.disconnect();
  await db.close();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
