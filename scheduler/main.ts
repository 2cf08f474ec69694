/**
 * Entry point of the global scheduler: `node dist/scheduler/main.js`.
 *
 * Today it connects to the job queue and reports what is waiting; admission, fair share, placement
 * and the device-lock service land with the scheduler issue (see docs/architecture.md). It never
 * consumes queue entries yet, so accepted jobs stay queued, visible and cancellable.
 */
import { Queue } from 'bullmq';
import { loadSchedulerConfig } from './config.js';
import { createLogger } from '../common/logger.js';
import { JOBS_QUEUE, redisNames } from '../common/queues.js';
import { connectRedis } from '../common/redis.js';

const config = loadSchedulerConfig();
const logger = createLogger('scheduler', config.LOG_LEVEL);
const connection = connectRedis(config.REDIS_URL, { blocking: true });
const queue = new Queue(JOBS_QUEUE, {
  connection,
  prefix: redisNames(config.TIMESHARE_REDIS_PREFIX).bullPrefix,
});

let last = -1;
async function report(): Promise<void> {
  const waiting = await queue.getWaitingCount();
  if (waiting !== last) logger.info({ waiting }, 'jobs waiting for placement');
  last = waiting;
}

logger.info('scheduler started (placement lands with the scheduler issue)');
const timer = setInterval(() => report().catch((err) => logger.warn({ err }, 'queue report failed')), 10_000);
void report().catch((err) => logger.warn({ err }, 'queue report failed'));

async function shutdown(): Promise<void> {
  clearInterval(timer);
  await queue.close();
  connection.disconnect();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
