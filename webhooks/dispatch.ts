/**
 * Sending: claim due deliveries (a lease in the row, so a dispatcher that dies mid-send only delays
 * them), POST each signed, record the outcome. 2xx is delivered; anything else is retried with
 * exponential backoff until the message's deadline, then marked failed (it stays replayable).
 */
import type pg from 'pg';
import type { Logger } from '../common/logger.js';
import { retryDelayMs } from './backoff.js';
import { signedHeaders } from './signing.js';
import { checkWebhookUrl } from './url-policy.js';

export interface DispatchOptions {
  concurrency: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  allowPrivate: boolean;
}

interface Claimed {
  id: string;
  payload: unknown;
  attempts: number;
  url: string;
  secret: string;
}

/** The webhook-id of a delivery: stable across retries and replays. */
export const messageId = (deliveryId: string) => `msg_${deliveryId}`;

async function claim(pool: pg.Pool, limit: number, leaseMs: number): Promise<Claimed[]> {
  const r = await pool.query(
    `UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $2 / 1000.0)
       FROM webhook_endpoints w
      WHERE w.id = d.endpoint_id
        AND d.id IN (SELECT id FROM webhook_deliveries
                      WHERE status = 'pending' AND next_attempt_at <= now()
                      ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.payload, d.attempts, w.url, w.secret`,
    [limit, leaseMs],
  );
  return r.rows;
}

async function send(
  d: Claimed,
  opts: DispatchOptions,
): Promise<{ status: number | null; error: string | null }> {
  try {
    await checkWebhookUrl(d.url, opts.allowPrivate);
    const body = JSON.stringify(d.payload);
    const res = await fetch(d.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Timeshare-Webhooks/1',
        ...signedHeaders(d.secret, messageId(d.id), body),
      },
      body,
      // A redirect could point anywhere, private addresses included: not followed.
      redirect: 'manual',
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    await res.body?.cancel();
    return res.ok ? { status: res.status, error: null } : { status: res.status, error: `HTTP ${res.status}` };
  } catch (err) {
    return { status: null, error: err instanceof Error ? err.message : String(err) };
  }
}

async function record(
  pool: pg.Pool,
  d: Claimed,
  out: { status: number | null; error: string | null },
  opts: DispatchOptions,
) {
  if (out.error === null) {
    await pool.query(
      `UPDATE webhook_deliveries SET status = 'succeeded', attempts = attempts + 1, delivered_at = now(),
              last_status_code = $2, last_error = NULL WHERE id = $1`,
      [d.id, out.status],
    );
    return;
  }
  const delay = retryDelayMs(d.attempts + 1, opts.retryBaseMs, opts.retryMaxMs);
  await pool.query(
    `UPDATE webhook_deliveries
        SET attempts = attempts + 1, last_status_code = $2, last_error = $3,
            next_attempt_at = now() + make_interval(secs => $4 / 1000.0),
            status = CASE WHEN now() + make_interval(secs => $4 / 1000.0) > deadline THEN 'failed' ELSE 'pending' END
      WHERE id = $1`,
    [d.id, out.status, out.error.slice(0, 500), delay],
  );
}

/** One round: returns how many deliveries it attempted. */
export async function dispatchDue(pool: pg.Pool, opts: DispatchOptions, logger: Logger): Promise<number> {
  const due = await claim(pool, opts.concurrency, opts.timeoutMs + 5_000);
  await Promise.all(
    due.map(async (d) => {
      const out = await send(d, opts);
      if (out.error)
        logger.info({ delivery: d.id, url: d.url, error: out.error }, 'webhook delivery failed; will retry');
      await record(pool, d, out, opts);
    }),
  );
  return due.length;
}
