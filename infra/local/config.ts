/**
 * What `npm start` itself reads, through the same parser as every process it starts: a bad value
 * stops it before it starts anything. Each child still checks its own variables, and one that
 * refuses them (exit CONFIG_EXIT_CODE) stops the launcher rather than being started again.
 */
import { z } from 'zod';
import { parseConfig } from '../../common/config.js';
import { millis, nonBlank, numberIn } from '../../common/config-values.js';
import { listenShape } from '../../api/config.js';
import { drainTimeoutSchema } from '../../worker-node/config.js';
import { parentGraceShape } from './parent-grace.js';

export const launcherConfigSchema = z.object({
  ...listenShape,
  ...parentGraceShape,
  // The launcher waits for the API at this port: 0 (any free port) would leave it nothing to call.
  PORT: numberIn({ min: 1, max: 65_535 }).default(8080),
  /** The first delay before a crashed child is started again; doubling up to 30 s. */
  TIMESHARE_RESTART_BACKOFF_MS: millis(1, 30_000).default(1000),
  /** The worker's drain; the launcher waits this and 15 s more before SIGKILL. */
  TIMESHARE_DRAIN_TIMEOUT_MS: drainTimeoutSchema,
  /** The local worker's virtual devices (its --virtual-devices). */
  TIMESHARE_VIRTUAL_DEVICES: numberIn({ min: 1, max: 64 }).default(2),
  TIMESHARE_NODE_NAME: nonBlank().max(128, 'must be at most 128 characters').optional(),
  /** Where a private PostgreSQL and Redis, checkpoints and the outbox live; unset, `.data/` in the checkout. One launcher per folder (data-lock.ts). */
  TIMESHARE_DATA_DIR: nonBlank().optional(),
  /**
   * The first of three ports, one Prometheus endpoint each: scheduler-a, scheduler-b, the worker
   * (children.ts); 0 = off.
   */
  TIMESHARE_METRICS_PORT: numberIn({ min: 0, max: 65_533 }).default(0),
  /** Where those endpoints listen; unset, the API's HOST. */
  TIMESHARE_METRICS_HOST: nonBlank().optional(),
});

export type LauncherConfig = Readonly<z.output<typeof launcherConfigSchema>>;

export function loadLauncherConfig(env: NodeJS.ProcessEnv = process.env): LauncherConfig {
  return parseConfig(launcherConfigSchema, env);
}
