/**
 * For the dispatcher's tests: a local receiver whose paths hang or answer as told, recording every
 * request (arrival, end, whether the dispatcher aborted it), and rows put straight in the outbox
 * (the API refuses loopback URLs unless the operator allows them).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { newSecret } from '../../webhooks/signing.js';
import { waitFor as waitUntil } from '../helpers/cluster.js';

export interface Hit {
  path: string;
  /** The webhook-id header: `msg_<delivery id>`. */
  id: string;
  at: number;
  /** When the request ended: answered, or aborted by the dispatcher (`aborted`). */
  endedAt: number | null;
  aborted: boolean;
}

/** How a path answers: never ('hang'), or with a status after `delayMs`. */
export type Behaviour = 'hang' | { status: number; delayMs?: number };

export interface Receiver {
  base: string;
  hits: Hit[];
  behaviour: Map<string, Behaviour>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hits: Hit[] = [];
  const behaviour = new Map<string, Behaviour>();
  const server = createServer((req, res) => {
    const hit: Hit = {
      path: req.url ?? '',
      id: String(req.headers['webhook-id'] ?? ''),
      at: Date.now(),
      endedAt: null,
      aborted: false,
    };
    hits.push(hit);
    res.on('close', () => {
      hit.endedAt = Date.now();
      hit.aborted = !res.writableFinished;
    });
    req.resume();
    const b = behaviour.get(hit.path) ?? { status: 204 };
    if (b === 'hang') return;
    setTimeout(() => res.writeHead(b.status, { location: 'http://127.0.0.1:1/' }).end(), b.delayMs ?? 0);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    behaviour,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** An endpoint of `tenantId` at the receiver's `path`, answering as `b`; returns its id. */
export async function addEndpoint(
  pool: pg.Pool,
  r: Receiver,
  tenantId: string,
  path: string,
  b: Behaviour,
): Promise<string> {
  r.behaviour.set(path, b);
  const q = await pool.query(
    'INSERT INTO webhook_endpoints (tenant_id, url, secret) VALUES ($1, $2, $3) RETURNING id',
    [tenantId, `${r.base}${path}`, newSecret()],
  );
  return q.rows[0].id;
}

/** `n` deliveries to the endpoint, due since `ageSeconds` ago; returns their webhook-ids. */
export async function addDeliveries(
  pool: pg.Pool,
  endpointId: string,
  n: number,
  ageSeconds: number,
): Promise<string[]> {
  const q = await pool.query(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload, deadline, next_attempt_at)
     SELECT $1, 1000000 + g, 'job.queued', jsonb_build_object('type', 'job.queued', 'data', '{}'::jsonb),
            now() + interval '1 hour', now() - make_interval(secs => $3)
       FROM generate_series(1, $2) g
     RETURNING 'msg_' || id AS id`,
    [endpointId, n, ageSeconds],
  );
  return q.rows.map((x: { id: string }) => x.id);
}

/** The most requests of `sel` open at once, looking only at arrivals before `until`. */
export function peakOpen(sel: Hit[], until: number): number {
  let peak = 0;
  for (const x of sel.filter((y) => y.at < until)) {
    const open = sel.filter((y) => y.at <= x.at && (y.endedAt === null || y.endedAt > x.at)).length;
    peak = Math.max(peak, open);
  }
  return peak;
}

/** `waitFor` polled every 25 ms: the pool's tests order deliveries a few hundred ms apart. */
export const waitFor = <T>(
  what: string,
  fn: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> => waitUntil(what, fn, timeoutMs, 25);
