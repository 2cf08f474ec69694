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
import { createApiMetrics } from './http/prom.js';
import { answerClientError } from './http/client-error.js';
import { EventHub } from './jobs/event-hub.js';
import { SchedulerWake } from '../common/jobs/scheduler-wake.js';
import { openCheckpointStore, storageConfigFromEnv } from '../common/storage/index.js';
import type { ApiDeps } from './deps.js';
import { DeviceLockService } from '../common/device-lock/index.js';
import { CheckpointSweeper } from './jobs/checkpoint-sweeper.js';
import { ApiPresence, presencePeriodMs } from '../common/api-presence.js';

/** How often each API process looks for retired checkpoints' files left to delete. */
const RETIRED_CHECKPOINT_SWEEP_MS = 60_000;

export interface RunningApi {
  url: string;
  server: Server;
  deps: ApiDeps;
  /** This process's presence for the liveness sweep (common/api-presence.ts), written while it listens. */
  presence: ApiPresence;
  /** Closes the server and its connections; calling it again waits for the first call. */
  stop(): Promise<void>;
}

export async function startApi(
  config: Config,
  logger: Logger = createLogger('api', config.LOG_LEVEL),
): Promise<RunningApi> {
  const db = connectDatabase(config.DATABASE_URL, config.TIMESHARE_DB_POOL_SIZE, logger);
  const redis = connectRedis(config.REDIS_URL, { log: logger });
  const names = redisNames(config.TIMESHARE_REDIS_PREFIX);
  const wake = new SchedulerWake(redis, names, logger);
  const events = await EventHub.start(
    connectRedis(config.REDIS_URL, { blocking: true, log: logger, name: 'events' }),
    names.eventsChannel,
  );
  const storage = openCheckpointStore(storageConfigFromEnv(config, config.TIMESHARE_STORAGE_ROOT));
  const deps: ApiDeps = {
    config,
    db,
    redis,
    names,
    wake,
    events,
    storage,
    retiredCheckpoints: new CheckpointSweeper(db.pool, storage, logger, RETIRED_CHECKPOINT_SWEEP_MS),
    metrics: createApiMetrics(),
    logger,
    locks: new DeviceLockService(redis, { prefix: names.lockPrefix }),
  };

  const server = createServer(createRequestHandler(deps));
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  server.keepAliveTimeout = 65_000;
  const addr = server.address() as AddressInfo;
  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${addr.port}`;
  // Present (able to take heartbeats) from now on: the liveness sweep counts nodes' silence only then.
  const presence = new ApiPresence(db.pool, logger, presencePeriodMs(config.TIMESHARE_NODE_TIMEOUT_MS));
  presence.start();

  let stopped: Promise<void> | null = null;
  const stop = async () => {
    await presence.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    deps.locks.close();
    await deps.retiredCheckpoints.close();
    await events.close();
    await redis.quit().catch(() => undefined);
    await db.close();
  };
  return {
    url,
    server,
    deps,
    presence,
    // Once: a second call (a test's cleanup after it stopped the API itself) waits for the first.
    stop: () => (stopped ??= stop()),
  };
}
