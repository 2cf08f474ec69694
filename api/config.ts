/** The API's configuration: the base schema, database, storage, and what only the API reads. */
import bytes from 'bytes';
import { z } from 'zod';
import {
  allowPrivateWebhooksSchema,
  baseConfigSchema,
  databaseConfigShape,
  nodeLivenessShape,
  parseConfig,
  storageConfigShape,
} from '../common/config.js';
import { millis, nonBlank, numberIn, port, required } from '../common/config-values.js';

/** Requests per second a limit may name: far past what one process serves, short of nonsense. */
const rate = () => numberIn({ min: 0, max: 1_000_000, fraction: true });

/** Where the API listens; `npm start` reads the same (infra/local/config.ts). */
export const listenShape = {
  // A blank HOST would listen on every interface.
  HOST: nonBlank().default('127.0.0.1'),
  PORT: port().default(8080),
};

export const apiConfigSchema = baseConfigSchema
  .extend(databaseConfigShape)
  .extend(storageConfigShape)
  .extend(listenShape)
  // How often the process writes its presence for the liveness sweep (common/api-presence.ts).
  .extend(nodeLivenessShape)
  .extend({
    TIMESHARE_ADMIN_KEY: required('the admin key, at least 16 characters').min(
      16,
      'must be at least 16 characters',
    ),
    TIMESHARE_JWT_SECRET: required('the token signing secret, at least 32 characters').min(
      32,
      'must be at least 32 characters',
    ),
    TIMESHARE_JWT_TTL_SECONDS: numberIn({ min: 30, max: 86_400 }).default(900),
    // body-parser reads a size it cannot parse ('lots') as no limit at all.
    TIMESHARE_BODY_LIMIT: z
      .string()
      .refine((v) => (bytes.parse(v) ?? 0) > 0, { message: 'must be a size such as 1mb, 512kb or 65536' })
      .default('1mb'),
    /** Requests per second per tenant or node, per API process (burst: twice that); 0 = no limit. */
    TIMESHARE_RATE_LIMIT_PER_SECOND: rate().default(2000),
    /**
     * Requests per second per client address, per API process, for requests without credentials and
     * for POST /v1/auth/token (burst: twice that); 0 = no limit.
     */
    TIMESHARE_ADDRESS_RATE_LIMIT_PER_SECOND: rate().default(50),
    TIMESHARE_DB_POOL_SIZE: numberIn({ min: 1, max: 200 }).default(16),
    /** API worker processes sharing the port (node:cluster); 1 = a single process, no primary. */
    TIMESHARE_API_WORKERS: numberIn({ min: 1, max: 64 }).default(1),
    /** Lets webhook endpoints on private or loopback addresses through (tests, private networks). */
    TIMESHARE_WEBHOOK_ALLOW_PRIVATE: allowPrivateWebhooksSchema,
    /** How long a webhook registration waits for its URL's host to resolve (503 `dns_timeout` after). */
    TIMESHARE_WEBHOOK_DNS_TIMEOUT_MS: millis(100, 60_000).default(5_000),
    /** The built dashboard served at /ui; unset: ui/dist of this checkout (api/http/dashboard.ts). */
    TIMESHARE_UI_DIR: nonBlank().optional(),
  });

export type Config = Readonly<z.output<typeof apiConfigSchema>>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parseConfig(apiConfigSchema, env);
}
