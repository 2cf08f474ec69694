import { z } from 'zod';
import { logLevelSchema, parseConfig } from '../common/config.js';

const schema = z.object({
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/timeshare'),
  TIMESHARE_REDIS_PREFIX: z.string().min(1).default('ts'),
  TIMESHARE_MAX_JOBS_PER_DEVICE: z.coerce.number().int().min(1).max(64).default(2),
  TIMESHARE_NODE_TIMEOUT_MS: z.coerce.number().int().min(500).default(15_000),
  TIMESHARE_PLACEMENT_RETRY_MS: z.coerce.number().int().min(50).default(1000),
  TIMESHARE_PLACEMENT_LOCK_MS: z.coerce.number().int().min(1000).default(10_000),
  LOG_LEVEL: logLevelSchema,
  /** Test-only fault injection: `crash_in_placement` SIGKILLs the scheduler holding a queue entry. */
  TIMESHARE_FAULT: z.string().optional(),
});

export type SchedulerConfig = Readonly<z.output<typeof schema>>;

export function loadSchedulerConfig(env: NodeJS.ProcessEnv = process.env): SchedulerConfig {
  return parseConfig(schema, env);
}
