/**
 * Configuration of every process, read from the environment once, validated, then frozen. A bad
 * value stops the process at start with the variable's name, never later with a confusing error.
 * Each process extends the base schema below with the parts it uses (database, storage) and its
 * own variables, so a variable shared by several processes is declared, defaulted and checked once.
 */
import { z } from 'zod';

export const logLevelSchema = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

/** The admin setting that lets webhook endpoints on private or loopback addresses through. */
export const allowPrivateWebhooksSchema = z
  .enum(['true', 'false'])
  .default('false')
  .transform((v) => v === 'true');

/** What every process reads. */
export const baseConfigSchema = z.object({
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  TIMESHARE_REDIS_PREFIX: z.string().min(1).default('ts'),
  LOG_LEVEL: logLevelSchema,
  /** Test-only fault injection (api: `crash_after_commit`; scheduler: `crash_in_round`, `crash_after_node_lost`). */
  TIMESHARE_FAULT: z.string().optional(),
});

/** The processes that talk to PostgreSQL (API, scheduler). */
export const databaseConfigShape = {
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/timeshare'),
};

/**
 * Node liveness, which the scheduler enforces and every worker must respect: a node silent for
 * this long is lost and its jobs run elsewhere, so a job process whose daemon has been silent
 * for a share of it stops first (worker-node/supervision.ts).
 */
export const nodeLivenessShape = {
  TIMESHARE_NODE_TIMEOUT_MS: z.coerce.number().int().min(500).default(15_000),
};

/** The processes that read or write checkpoints (API, workers); see common/storage. */
export const storageConfigShape = {
  TIMESHARE_STORAGE_ROOT: z.string().default('.data/checkpoints'),
  /** Set to keep checkpoints in an S3-compatible bucket instead of TIMESHARE_STORAGE_ROOT. */
  TIMESHARE_S3_BUCKET: z.string().optional(),
  TIMESHARE_S3_ENDPOINT: z.string().optional(),
  TIMESHARE_S3_REGION: z.string().optional(),
  TIMESHARE_S3_PREFIX: z.string().optional(),
  TIMESHARE_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).optional(),
};

/** Validates a process's environment against its schema; every problem is named in one error. */
export function parseConfig<S extends z.ZodType>(s: S, input: unknown): Readonly<z.output<S>> {
  const parsed = s.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(parsed.data);
}
