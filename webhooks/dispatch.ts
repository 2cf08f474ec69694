/**
 * Sending: claim due deliveries (a lease in the row, so a dispatcher that dies mid-send only delays
 * them), POST each signed, record the outcome. 2xx is delivered; anything else is retried with
 * exponential backoff until the message's deadline, then marked failed (it stays replayable).
 *
 * Deliveries run as a pool of `concurrency` sends: a slot freed is refilled at once (never per
 * batch), so one slow receiver holds one slot for at most the timeout, not everyone's deliveries.
 * One endpoint has at most `perEndpoint` sends in flight and one tenant at most `perTenant`, and a
 * claim hands the free slots out round-robin between tenants (each tenant's oldest due delivery
 * first, then each one's second, …), so a tenant with a large backlog or hanging receivers cannot
 * take every slot nor keep another tenant's deliveries waiting. The caps are per dispatcher process.
 *
 * A claim leases the row by moving its `next_attempt_at` past the longest a send may take (the
 * timeout, DNS check included, plus a margin), in one statement with FOR UPDATE SKIP LOCKED: no
 * other dispatcher picks the row while the lease holds. The outcome is written only if the row
 * still carries this claim's lease (a replay, or another dispatcher's claim after an expired lease,
 * wins over a late answer). A dispatcher that dies mid-send leaves the lease to expire: the message
 * is sent again under the same webhook-id (at least once).
 */
import type pg from 'pg';
import type { Logger } from '../common/logger.js';
import { retryDelayMs } from './backoff.js';
import { postWebhook } from './post.js';
import { signedHeaders } from './signing.js';
import { checkWebhookUrl, systemResolve, vettedLookup, type Resolve } from './url-policy.js';

export interface DispatchOptions {
  /** Sends in flight at once, over all tenants. */
  concurrency: number;
  /** Sends in flight at once to one endpoint, and to one tenant's endpoints together. */
  perEndpoint?: number;
  perTenant?: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  allowPrivate: boolean;
  /** How host names are resolved, for the check and the connection (tests answer their own). */
  resolve?: Resolve;
}

/** The per-tenant and per-endpoint caps when not given: half and a quarter of the pool. */
export function concurrencyCaps(opts: DispatchOptions): { perEndpoint: number; perTenant: number } {
  const perTenant = Math.max(
    1,
    Math.min(opts.concurrency, opts.perTenant ?? Math.ceil(opts.concurrency / 2)),
  );
  const perEndpoint = Math.max(1, Math.min(perTenant, opts.perEndpoint ?? Math.ceil(opts.concurrency / 4)));
  return { perEndpoint, perTenant };
}

/** Time a lease gives beyond the send's own timeout (the claim's and the record's queries, a busy loop). */
const LEASE_MARGIN_MS = 5_000;
/** How many due deliveries a claim looks at to share the free slots between tenants. */
const CLAIM_WINDOW = 1_000;

interface Claimed {
  id: string;
  endpointId: string;
  tenantId: string;
  payload: unknown;
  attempts: number;
  url: string;
  secret: string;
  /** The row's next_attempt_at as claimed, as text: the claim's token (see record). */
  lease: string;
}

interface Outcome {
  status: number | null;
  error: string | null;
  /** Cut short by close(): the attempt is not counted, the lease given back. */
  abandoned?: boolean;
}

/** The webhook-id of a delivery: stable across retries and replays. */
export const messageId = (deliveryId: string) => `msg_${deliveryId}`;

/**
 * Claims up to `limit` due deliveries, none of an endpoint or tenant at its cap: the oldest due
 * ones, shared out round-robin by tenant (within a tenant, by endpoint), each leased for `leaseMs`.
 */
async function claim(
  pool: pg.Pool,
  limit: number,
  leaseMs: number,
  caps: { perEndpoint: number; perTenant: number },
  busyEndpoints: Map<string, number>,
  busyTenants: Map<string, number>,
): Promise<Claimed[]> {
  const r = await pool.query(
    `WITH ep_busy AS (SELECT * FROM unnest($3::uuid[], $4::int[]) AS b(id, n)),
          tn_busy AS (SELECT * FROM unnest($5::uuid[], $6::int[]) AS b(id, n)),
          cand AS (
            SELECT d.id, d.endpoint_id, w.tenant_id, d.next_attempt_at,
                   $7::int - coalesce(eb.n, 0) AS ep_free, $8::int - coalesce(tb.n, 0) AS tn_free
              FROM webhook_deliveries d
              JOIN webhook_endpoints w ON w.id = d.endpoint_id
              LEFT JOIN ep_busy eb ON eb.id = d.endpoint_id
              LEFT JOIN tn_busy tb ON tb.id = w.tenant_id
             WHERE d.status = 'pending' AND d.next_attempt_at <= now()
               AND coalesce(eb.n, 0) < $7 AND coalesce(tb.n, 0) < $8
             ORDER BY d.next_attempt_at
             LIMIT $9),
          by_endpoint AS (
            SELECT *, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS ep_rank
              FROM cand),
          by_tenant AS (
            SELECT *, row_number() OVER (PARTITION BY tenant_id ORDER BY ep_rank, next_attempt_at, id) AS tn_rank
              FROM by_endpoint WHERE ep_rank <= ep_free),
          picked AS (
            SELECT id FROM by_tenant WHERE tn_rank <= tn_free
             ORDER BY tn_rank, next_attempt_at, id LIMIT $1)
     UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $2 / 1000.0)
       FROM webhook_endpoints w
      WHERE w.id = d.endpoint_id
        AND d.id IN (SELECT id FROM webhook_deliveries
                      WHERE id IN (SELECT id FROM picked) AND status = 'pending' AND next_attempt_at <= now()
                      FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.endpoint_id AS "endpointId", w.tenant_id AS "tenantId", d.payload, d.attempts,
                w.url, w.secret, d.next_attempt_at::text AS lease`,
    [
      limit,
      leaseMs,
      [...busyEndpoints.keys()],
      [...busyEndpoints.values()],
      [...busyTenants.keys()],
      [...busyTenants.values()],
      caps.perEndpoint,
      caps.perTenant,
      CLAIM_WINDOW,
    ],
  );
  return r.rows;
}

/** Rejects when `signal` aborts: what bounds the URL check (a DNS lookup) by the attempt's timeout. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function send(d: Claimed, opts: DispatchOptions, abandon: AbortSignal): Promise<Outcome> {
  // One deadline for the whole attempt, DNS check included, well inside the lease.
  const signal = AbortSignal.any([AbortSignal.timeout(opts.timeoutMs), abandon]);
  const resolve = opts.resolve ?? systemResolve;
  try {
    const url = await abortable(checkWebhookUrl(d.url, opts.allowPrivate, resolve), signal);
    const body = JSON.stringify(d.payload);
    // The connection resolves the name again, and vets that answer too: it connects only to the
    // addresses its own lookup approved, whatever DNS answers between the check and the connect.
    const status = await postWebhook(
      url,
      {
        'content-type': 'application/json',
        'user-agent': 'Timeshare-Webhooks/1',
        ...signedHeaders(d.secret, messageId(d.id), body),
      },
      body,
      vettedLookup(opts.allowPrivate, resolve),
      signal,
    );
    // A redirect could point anywhere, private addresses included: not followed (post.ts).
    const ok = status >= 200 && status < 300;
    return ok ? { status, error: null } : { status, error: `HTTP ${status}` };
  } catch (err) {
    if (abandon.aborted) return { status: null, error: 'abandoned at shutdown', abandoned: true };
    return { status: null, error: err instanceof Error ? err.message : String(err) };
  }
}

/** Writes an attempt's outcome if the row still holds this claim's lease; false if it did not. */
async function record(pool: pg.Pool, d: Claimed, out: Outcome, opts: DispatchOptions): Promise<boolean> {
  const mine = `id = $1 AND status = 'pending' AND next_attempt_at = $2::timestamptz`;
  if (out.abandoned) {
    // Not an attempt: due again at once, for this or any dispatcher.
    const r = await pool.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE ${mine}`, [
      d.id,
      d.lease,
    ]);
    return r.rowCount === 1;
  }
  if (out.error === null) {
    const r = await pool.query(
      `UPDATE webhook_deliveries SET status = 'succeeded', attempts = attempts + 1, delivered_at = now(),
              last_status_code = $3, last_error = NULL WHERE ${mine}`,
      [d.id, d.lease, out.status],
    );
    return r.rowCount === 1;
  }
  const delay = retryDelayMs(d.attempts + 1, opts.retryBaseMs, opts.retryMaxMs);
  const r = await pool.query(
    `UPDATE webhook_deliveries
        SET attempts = attempts + 1, last_status_code = $3, last_error = $4,
            next_attempt_at = now() + make_interval(secs => $5 / 1000.0),
            status = CASE WHEN now() + make_interval(secs => $5 / 1000.0) > deadline THEN 'failed' ELSE 'pending' END
      WHERE ${mine}`,
    [d.id, d.lease, out.status, out.error.slice(0, 500), delay],
  );
  return r.rowCount === 1;
}

const bump = (m: Map<string, number>, k: string, by: number) => {
  const n = (m.get(k) ?? 0) + by;
  if (n > 0) m.set(k, n);
  else m.delete(k);
};

/**
 * The pool of sends. `pump()` fills the free slots with due deliveries and returns once they are
 * claimed and started, never waiting for a send; each send, when it ends, records its outcome and
 * pumps again. `close()` stops claiming and waits for the sends in flight, abandoning (lease given
 * back, attempt not counted) those still running after a grace period.
 */
export class Dispatcher {
  private readonly caps: { perEndpoint: number; perTenant: number };
  /** One entry per send (a replay may put a row's id in flight twice). */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly busyEndpoints = new Map<string, number>();
  private readonly busyTenants = new Map<string, number>();
  private readonly abandon = new AbortController();
  private pumping: Promise<void> | null = null;
  private again = false;
  private closing = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: DispatchOptions,
    private readonly logger: Logger,
  ) {
    this.caps = concurrencyCaps(opts);
  }

  /** Sends in flight now. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Claims due deliveries for every free slot and starts them; resolves once they are started. */
  pump(): Promise<void> {
    if (this.closing) return Promise.resolve();
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      try {
        do {
          this.again = false;
          while (!this.closing && this.inFlight.size < this.opts.concurrency) {
            const due = await claim(
              this.pool,
              this.opts.concurrency - this.inFlight.size,
              this.opts.timeoutMs + LEASE_MARGIN_MS,
              this.caps,
              this.busyEndpoints,
              this.busyTenants,
            );
            for (const d of due) this.start(d);
            if (due.length === 0) break;
          }
        } while (this.again && !this.closing);
      } finally {
        this.pumping = null;
      }
    })();
    return this.pumping;
  }

  private start(d: Claimed): void {
    bump(this.busyEndpoints, d.endpointId, 1);
    bump(this.busyTenants, d.tenantId, 1);
    const task: Promise<void> = this.attempt(d).finally(() => {
      this.inFlight.delete(task);
      bump(this.busyEndpoints, d.endpointId, -1);
      bump(this.busyTenants, d.tenantId, -1);
      if (!this.closing)
        this.pump().catch((err) => this.logger.warn({ err }, 'claiming webhook deliveries failed'));
    });
    this.inFlight.add(task);
  }

  /** Sends one claimed delivery and records the outcome; never rejects. */
  private async attempt(d: Claimed): Promise<void> {
    try {
      const out = await send(d, this.opts, this.abandon.signal);
      if (out.error && !out.abandoned)
        this.logger.info(
          { delivery: d.id, url: d.url, error: out.error },
          'webhook delivery failed; will retry',
        );
      if (!(await record(this.pool, d, out, this.opts)))
        this.logger.info(
          { delivery: d.id },
          'webhook delivery was replayed or re-claimed meanwhile; outcome not recorded',
        );
    } catch (err) {
      // The row keeps its lease: the message is sent again once it expires.
      this.logger.warn({ err, delivery: d.id }, 'recording a webhook delivery failed');
    }
  }

  /** Waits until nothing is in flight (for tests and benchmarks; claiming goes on meanwhile). */
  async idle(): Promise<void> {
    while (this.inFlight.size || this.pumping) {
      await Promise.allSettled([...this.inFlight.values(), this.pumping]);
    }
  }

  /**
   * Stops claiming, lets the sends in flight finish for up to `graceMs`, then abandons the rest:
   * their requests are aborted and their leases given back (due at once, the attempt not counted),
   * so another dispatcher sends them without waiting for the lease. Resolves when nothing is left.
   */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    await this.pumping?.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled([...this.inFlight.values()]), grace]);
    clearTimeout(timer);
    this.abandon.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }
}
