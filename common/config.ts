/**
 * Configuration of every process, read from the environment once, validated, then frozen. A bad
 * value stops the process at start with the variable's name, never later with a confusing error.
 * Each process extends the base schema below with the parts it uses (database, storage) and its
 * own variables, so a variable shared by several processes is declared, defaulted and checked once.
 * The kinds of value (numbers in a range, durations, URLs, switches) are in config-values.ts.
 */
import { z } from 'zod';
import { millis, nonBlank, oneOf, urlOf } from './config-values.js';

export const logLevelSchema = oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(
  'info',
);

/** The admin setting that lets webhook endpoints on private or loopback addresses through. */
export const allowPrivateWebhooksSchema = oneOf(['true', 'false'])
  .default('false')
  .transform((v) => v === 'true');

/** Test-only fault injection: each names one crash point (a misspelt one would inject nothing). */
export const faults = ['crash_after_commit', 'crash_in_round', 'crash_after_node_lost'] as const;

/** What every process reads. */
export const baseConfigSchema = z.object({
  // ioredis reads a string that is no redis:// URL as a host name, and '' as localhost.
  REDIS_URL: urlOf('redis:', 'rediss:').default('redis://127.0.0.1:6379'),
  TIMESHARE_REDIS_PREFIX: nonBlank().default('ts'),
  LOG_LEVEL: logLevelSchema,
  /** api: `crash_after_commit`; scheduler: `crash_in_round`, `crash_after_node_lost`. */
  TIMESHARE_FAULT: oneOf(faults).optional(),
});

/** The processes that talk to PostgreSQL (API, scheduler, webhooks). */
export const databaseConfigShape = {
  DATABASE_URL: urlOf('postgresql:', 'postgres:').default('postgresql://postgres@127.0.0.1:5432/timeshare'),
};

/**
 * Node liveness, which the scheduler enforces and every worker must respect: a node silent for
 * this long is lost and its jobs run elsewhere, so a job process whose daemon has been silent
 * for a share of it stops first (worker-node/supervision.ts).
 */
export const nodeLivenessShape = {
  TIMESHARE_NODE_TIMEOUT_MS: millis(500).default(15_000),
};

/** The processes that read or write checkpoints (API, workers); see common/storage. */
export const storageConfigShape = {
  TIMESHARE_STORAGE_ROOT: nonBlank().default('.data/checkpoints'),
  /** Set to keep checkpoints in an S3-compatible bucket instead of TIMESHARE_STORAGE_ROOT (empty = unset). */
  TIMESHARE_S3_BUCKET: z.string().optional(),
  TIMESHARE_S3_ENDPOINT: z.union([z.literal(''), urlOf('http:', 'https:')]).optional(),
  TIMESHARE_S3_REGION: z.string().optional(),
  TIMESHARE_S3_PREFIX: z.string().optional(),
  TIMESHARE_S3_FORCE_PATH_STYLE: oneOf(['true', 'false']).optional(),
};

/** A configuration refused: one line per variable, each naming it and what it accepts. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates a process's environment against its schema; every problem is named in one error.
 * `names` shows a field under the name its user typed (a command-line flag rather than a key).
 */
export function parseConfig<S extends z.ZodType>(
  s: S,
  input: unknown,
  names: Record<string, string> = {},
): Readonly<z.output<S>> {
  const parsed = s.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const key = i.path.join('.');
      return `${names[key] ?? key}: ${i.message}`;
    });
    throw new ConfigError(problems);
  }
  return Object.freeze(parsed.data);
}

/**
 * The exit status of a process that refused its configuration (sysexits' EX_CONFIG): starting it
 * again would only be refused again, so `npm start` stops instead of restarting it.
 */
export const CONFIG_EXIT_CODE = 78;

/** Loads a process's configuration, or says what is wrong on stderr and exits with CONFIG_EXIT_CODE. */
export function configOrExit<T>(proc: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${proc}: ${err.message}\n`);
    process.exit(CONFIG_EXIT_CODE);
  }
}
