/** The API's configuration: the base schema, database, storage, and what only the API reads. */
import { z } from 'zod';
import {
  allowPrivateWebhooksSchema,
  baseConfigSchema,
  databaseConfigShape,
  parseConfig,
  storageConfigShape,
} from '../common/config.js';

const schema = baseConfigSchema
  .extend(databaseConfigShape)
  .extend(storageConfigShape)
  .extend({
    HOST: z.string().default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    TIMESHARE_ADMIN_KEY: z.string().min(16, 'TIMESHARE_ADMIN_KEY must be at least 16 characters'),
    TIMESHARE_JWT_SECRET: z.string().min(32, 'TIMESHARE_JWT_SECRET must be at least 32 characters'),
    TIMESHARE_JWT_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(900),
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
    /** Lets webhook endpoints on private or loopback addresses through (tests, private networks). */
    TIMESHARE_WEBHOOK_ALLOW_PRIVATE: allowPrivateWebhooksSchema,
    /** The built dashboard served at /ui; unset: ui/dist of this checkout (api/http/dashboard.ts). */
    TIMESHARE_UI_DIR: z.string().min(1).optional(),
  });

export type Config = Readonly<z.output<typeof schema>>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parseConfig(schema, env);
}
