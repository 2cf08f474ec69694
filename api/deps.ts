import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { Database } from '../common/db.js';
import type { Logger } from '../common/logger.js';
import type { RedisNames } from '../common/queues.js';
import type { ApiMetrics } from './http/prom.js';
import type { EventHub } from './jobs/event-hub.js';
import type { SchedulerWake } from '../common/jobs/scheduler-wake.js';
import type { CheckpointStore } from '../common/storage/index.js';
import type { DeviceLockService } from '../common/device-lock/index.js';
import type { CheckpointSweeper } from './jobs/checkpoint-sweeper.js';
import type { Resolve } from '../webhooks/url-policy.js';

/** Everything the HTTP layer needs, built once by main.ts (or by a test). */
export interface ApiDeps {
  config: Config;
  db: Database;
  redis: Redis;
  names: RedisNames;
  /** Wakes the scheduler after a commit that changes what it should decide on. */
  wake: SchedulerWake;
  events: EventHub;
  storage: CheckpointStore;
  /** Deletes the files of checkpoints retired by their job's keepCheckpoints. */
  retiredCheckpoints: CheckpointSweeper;
  metrics: ApiMetrics;
  logger: Logger;
  /** Read side of the device locks: the grant/release timeline. */
  locks: DeviceLockService;
  /** How webhook registrations resolve a URL's host to vet it; unset: the system resolver (tests answer their own). */
  resolveHost?: Resolve;
}
