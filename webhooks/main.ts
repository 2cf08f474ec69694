/**
 * Entry point of the webhook dispatcher: `node dist/webhooks/main.js`. A process of its own rather
 * than part of the API: slow or failing receivers must not take the API's connections, CPU or
 * event loop from submissions, and N API processes would each re-read the same events. Everything
 * it knows is in PostgreSQL (cursor, deliveries, their next attempt), so a restart resumes where
 * it stopped; several dispatchers can still run at once (idempotent fan-out, SKIP LOCKED claims).
 */
import { createPool } from '../common/pg-pool.js';
import { createLogger } from '../common/logger.js';
import { configOrExit } from '../common/config.js';
import { loadWebhookConfig } from './config.js';
import { Dispatcher } from './dispatch.js';
import { ensureCursor, fanOut } from './fan-out.js';

const config = configOrExit('webhooks', () => loadWebhookConfig());
const logger = createLogger('webhooks', config.LOG_LEVEL);
// Its clients may lose their connection (a database restart) without taking the process down.
const pool = createPool({ connectionString: config.DATABASE_URL, max: 4 }, logger);
const FAN_OUT_BATCH = 1000;
const options = {
  concurrency: config.TIMESHARE_WEBHOOK_CONCURRENCY,
  timeoutMs: config.TIMESHARE_WEBHOOK_TIMEOUT_MS,
  retryBaseMs: config.TIMESHARE_WEBHOOK_RETRY_BASE_MS,
  retryMaxMs: config.TIMESHARE_WEBHOOK_RETRY_MAX_MS,
  allowPrivate: config.TIMESHARE_WEBHOOK_ALLOW_PRIVATE,
};

/** How long shutdown waits for sends in flight before abandoning them (their leases given back). */
const SHUTDOWN_GRACE_MS = Math.min(5_000, options.timeoutMs);

let stopping = false;
let timer: NodeJS.Timeout | undefined;
const dispatcher = new Dispatcher(pool, options, logger);

/**
 * Fan-out, then fill the free send slots with what is due (retries come due here). Neither waits
 * for a send: sends run in the dispatcher's pool, and each one ended refills its slot at once.
 */
async function round(): Promise<void> {
  await fanOut(pool, { limit: FAN_OUT_BATCH, maxAgeHours: config.TIMESHARE_WEBHOOK_MAX_AGE_HOURS });
  if (!stopping) await dispatcher.pump();
}

let current: Promise<void> = Promise.resolve();
function schedule(): void {
  if (stopping) return;
  timer = setTimeout(() => {
    current = round()
      .catch((err) => logger.warn({ err }, 'webhook round failed'))
      .finally(schedule);
  }, config.TIMESHARE_WEBHOOK_POLL_MS);
}

async function main(): Promise<void> {
  await ensureCursor(pool);
  logger.info(
    { allowPrivate: options.allowPrivate, pollMs: config.TIMESHARE_WEBHOOK_POLL_MS },
    'webhook dispatcher started',
  );
  current = round().catch((err) => logger.warn({ err }, 'webhook round failed'));
  await current;
  schedule();
}

async function shutdown(signal: string): Promise<void> {
  logger.info({ signal }, 'shutting down');
  stopping = true;
  clearTimeout(timer);
  await current;
  // Sends in flight may finish for a while; those still running are abandoned with their leases
  // given back, so that they are sent again at once (same webhook-id). A kill mid-send only delays
  // a delivery by its lease.
  await dispatcher.close(SHUTDOWN_GRACE_MS);
  await pool.end();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));

main().catch((err) => {
  logger.fatal({ err }, 'webhook dispatcher failed to start');
  process.exit(1);
});
