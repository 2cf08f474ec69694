/**
 * Builds the API's dependencies from configuration and starts listening; shared by main.ts and the
 * tests (which run the same server in-process against their own database and Redis prefix).
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Config } from './config.js';
import { connectDatabase } from '../common/db.js';
import { createLogger, type Logger } from '../common/logger.js';
import { redisNames } from '../common/queues.js';
import { connectRedis } from '../common/redis.js';
import { createRequestHandler } from './app.js';
import { workerIndex } from './cluster.js';
import { createApiMetrics } from './http/prom.js';
import { answerClientError } from './http/client-error.js';
import { EventHub } from './jobs/event-hub.js';
import { JobQueue } from '../common/jobs/queue.js';
import { reconcileQueue } from '../common/jobs/reconcile.js';
import { openCheckpointStore, storageConfigFromEnv } from '../common/storage/index.js';
import type { ApiDeps } from './deps.js';
import { DeviceLockService } from '../common/device-lock/index.js';

export interface RunningApi {
  url: string;
  server: Server;
  deps: ApiDeps;
  stop(): Promise<void>;
}

export async function startApi(
  config: Config,
  logger: Logger = createLogger('api', config.LOG_LEVEL),
): Promise<RunningApi> {
  const db = connectDatabase(config.DATABASE_URL, config.TIMESHARE_DB_POOL_SIZE);
  const redis = connectRedis(config.REDIS_URL);
  const bullConnection = connectRedis(config.REDIS_URL, { autoPipelining: true });
  const names = redisNames(config.TIMESHARE_REDIS_PREFIX);
  const queue = new JobQueue(bullConnection, names);
  const events = await EventHub.start(
    connectRedis(config.REDIS_URL, { blocking: true }),
    names.eventsChannel,
  );
  const deps: ApiDeps = {
    config,
    db,
    redis,
    names,
    queue,
    events,
    storage: openCheckpointStore(storageConfigFromEnv(config, config.TIMESHARE_STORAGE_ROOT)),
    metrics: createApiMetrics(),
    logger,
    locks: new DeviceLockService(redis, { prefix: names.lockPrefix }),
  };

  // Jobs committed but never enqueued (a crash between the two, or Redis lost its data) go back in.
  // In a cluster the first worker does it for all (it is idempotent, just not worth doing N times).
  const reconciles = workerIndex() === 0;
  if (reconciles) {
    const requeued = await reconcileQueue(db.pool, queue);
    logger.info({ requeued }, 'queue reconciled with PostgreSQL');
  }
  const reconcileTimer =
    reconciles && config.TIMESHARE_RECONCILE_INTERVAL_MS > 0
      ? setInterval(() => {
          reconcileQueue(db.pool, queue).catch((err) => logger.warn({ err }, 'reconciliation failed'));
        }, config.TIMESHARE_RECONCILE_INTERVAL_MS)
      : null;
  reconcileTimer?.unref();

  const server = createServer(createRequestHandler(deps));
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  server.keepAliveTimeout = 65_000;
  const addr = server.address() as AddressInfo;
  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${addr.port}`;

  return {
    url,
    server,
    deps,
    async stop() {
      if (reconcileTimer) clearInterval(reconcileTimer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      deps.locks.close();
      await events.close();
      await queue.close();
      await Promise.all([redis.quit().catch(() => undefined), bullConnection.quit().catch(() => undefined)]);
      await db.close();
    },
  };
}
