/**
 * Configuration of every process, read from the environment once, validated, then frozen. A bad
 * value stops the process at start with the variable's name, never later with a confusing error.
 */
import { z } from 'zod';

export const logLevelSchema = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

const schema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/timeshare'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  TIMESHARE_REDIS_PREFIX: z.string().min(1).default('ts'),
  TIMESHARE_ADMIN_KEY: z.string().min(16, 'TIMESHARE_ADMIN_KEY must be at least 16 characters'),
  TIMESHARE_JWT_SECRET: z.string().min(32, 'TIMESHARE_JWT_SECRET must be at least 32 characters'),
  TIMESHARE_JWT_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(900),
  TIMESHARE_STORAGE_ROOT: z.string().default('.data/checkpoints'),
  /** Set to keep checkpoints in an S3-compatible bucket instead of TIMESHARE_STORAGE_ROOT. */
  TIMESHARE_S3_BUCKET: z.string().optional(),
  TIMESHARE_S3_ENDPOINT: z.string().optional(),
  TIMESHARE_S3_REGION: z.string().optional(),
  TIMESHARE_S3_PREFIX: z.string().optional(),
  TIMESHARE_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).optional(),
  TIMESHARE_BODY_LIMIT: z.string().default('1mb'),
  /** Requests per second per tenant or node, per API process (burst: twice that); 0 = no limit. */
  TIMESHARE_RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).default(2000),
  /**
   * Requests per second per client address, per API process, for requests without credentials and
   * for POST /v1/auth/token (burst: twice that); 0 = no limit.
   */
  TIMESHARE_ADDRESS_RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).default(50),
  TIMESHARE_DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(16),
  /** API worker processes sharing the port (node:cluster); 1 = a single process, no primary. */
  TIMESHARE_API_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  TIMESHARE_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(30_000),
  LOG_LEVEL: logLevelSchema,
  /** Test-only fault injection, e.g. `crash_after_commit`. Never set in production. */
  TIMESHARE_FAULT: z.string().optional(),
});

export type Config = Readonly<z.output<typeof schema>>;

/** Validates a process's environment against its schema; every problem is named in one error. */
export function parseConfig<S extends z.ZodType>(s: S, input: unknown): Readonly<z.output<S>> {
  const parsed = s.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(parsed.data);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parseConfig(schema, env);
}
