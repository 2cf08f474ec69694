/**
 * The webhook dispatcher's configuration: the base schema (common/config.ts; it reads no Redis, but
 * shares the log level and fault switch with every process), the database, and its own variables.
 */
import type { z } from 'zod';
import {
  allowPrivateWebhooksSchema,
  baseConfigSchema,
  databaseConfigShape,
  parseConfig,
} from '../common/config.js';
import { millis, numberIn, YEAR_HOURS } from '../common/config-values.js';

export const webhookConfigSchema = baseConfigSchema.extend(databaseConfigShape).extend({
  TIMESHARE_WEBHOOK_ALLOW_PRIVATE: allowPrivateWebhooksSchema,
  /** How often new job events are fanned out and due deliveries sent. */
  TIMESHARE_WEBHOOK_POLL_MS: millis(10).default(500),
  /** First retry delay; each further retry doubles it, up to TIMESHARE_WEBHOOK_RETRY_MAX_MS. */
  TIMESHARE_WEBHOOK_RETRY_BASE_MS: millis(1).default(5_000),
  TIMESHARE_WEBHOOK_RETRY_MAX_MS: millis(1).default(3_600_000),
  /** A message is retried for this long after its event, then marked failed (replayable). */
  TIMESHARE_WEBHOOK_MAX_AGE_HOURS: numberIn({ min: 0.001, max: YEAR_HOURS, fraction: true }).default(72),
  TIMESHARE_WEBHOOK_TIMEOUT_MS: millis(100).default(10_000),
  /**
   * Deliveries sent at once, as a pool; one tenant has at most half of them in flight and one
   * endpoint a quarter (webhooks/dispatch.ts).
   */
  TIMESHARE_WEBHOOK_CONCURRENCY: numberIn({ min: 1, max: 256 }).default(16),
});

export type WebhookConfig = Readonly<z.output<typeof webhookConfigSchema>>;

export function loadWebhookConfig(env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  return parseConfig(webhookConfigSchema, env);
}
