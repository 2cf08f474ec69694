/**
 * Head-of-line blocking, end to end: the dispatcher as a real process against real PostgreSQL and
 * receivers on 127.0.0.1. One tenant's three endpoints never answer and 90 of its deliveries are
 * due (the oldest rows); another tenant's event, written while those sends hang, must be fanned
 * out and delivered, and a third tenant's 302 must be retried, before the first hanging send is
 * aborted by the timeout — order, not absolute times. The hanging tenant gets at most its share of
 * the slots (4 per endpoint, 8 per tenant, of 16), and shutdown gives the leases of the sends it
 * abandons back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { startProcess, type Proc } from '../helpers/processes.js';
import { addDeliveries, addEndpoint, peakOpen, startReceiver, waitFor, type Receiver } from './receivers.js';

let h: Harness;
let rx: Receiver;
let dispatcher: Proc | null = null;

before(async () => {
  h = await startHarness();
  rx = await startReceiver();
});
after(async () => {
  await dispatcher?.kill('SIGKILL');
  await rx.close();
  await h.close();
});

test(
  "a tenant whose receivers hang holds up neither fan-out nor another tenant's deliveries and retries",
  { timeout: 120_000 },
  async () => {
    const db = h.api.deps.db.pool;
    const slow = await h.createTenant();
    const fast = await h.createTenant();
    const redirected = await h.createTenant();
    const hanging: string[] = [];
    for (const i of [1, 2, 3]) {
      const e = await addEndpoint(db, rx, slow.id, `/slow/${i}`, 'hang');
      hanging.push(...(await addDeliveries(db, e, 30, 60)));
    }
    // Due a little earlier still: in the first batch of a dispatcher that takes rows in order.
    const moved = await addEndpoint(db, rx, redirected.id, '/moved', { status: 302 });
    const [movedId] = await addDeliveries(db, moved, 1, 61);
    // Tenant "fast": its endpoint exists before its event does; the event comes below.
    await addEndpoint(db, rx, fast.id, '/fast', { status: 204 });

    dispatcher = startProcess('webhooks/main.ts', {
      DATABASE_URL: h.db.url,
      TIMESHARE_WEBHOOK_ALLOW_PRIVATE: 'true',
      TIMESHARE_WEBHOOK_POLL_MS: '100',
      TIMESHARE_WEBHOOK_TIMEOUT_MS: '8000',
      TIMESHARE_WEBHOOK_RETRY_BASE_MS: '500',
      LOG_LEVEL: 'info',
    });
    const slowHits = () => rx.hits.filter((x) => x.path.startsWith('/slow/'));
    await waitFor('the hanging receivers to be called', () => slowHits().length > 0);

    // While those sends hang, tenant "fast" submits a job: its job.queued event is to be fanned
    // out and delivered now, not after them.
    await fast
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'fast-one', workflow: { task: { name: 'addition' } } })
      .expect(201);
    const firstAbort = await waitFor('a hanging send to time out', () => {
      const t = slowHits()
        .filter((x) => x.aborted)
        .map((x) => x.endedAt!);
      return t.length ? Math.min(...t) : null;
    });
    const when = (x: { at: number } | undefined) => (x ? `${x.at - firstAbort} ms` : 'not yet');
    const fastHit = rx.hits.find((x) => x.path === '/fast');
    assert.ok(
      fastHit && fastHit.at < firstAbort,
      `the fast tenant's event arrives before the first hanging send times out: ${when(fastHit)}`,
    );
    const movedRetry = rx.hits.filter((x) => x.id === movedId)[1];
    assert.ok(
      movedRetry && movedRetry.at < firstAbort,
      `the 302's retry arrives before the first hanging send times out: ${when(movedRetry)}`,
    );

    // The hanging tenant had its share of the 16 slots: 4 per endpoint, 8 in all, no more.
    for (const i of [1, 2, 3]) {
      const peak = peakOpen(
        rx.hits.filter((x) => x.path === `/slow/${i}`),
        firstAbort,
      );
      assert.ok(peak <= 4, `/slow/${i}: ${peak} in flight at once`);
    }
    assert.equal(peakOpen(slowHits(), firstAbort), 8, 'the hanging tenant fills its 8 slots');

    // Shutdown: the sends still hanging are abandoned after the grace period, their leases given
    // back (due at once, the attempt not counted) for any dispatcher to send again.
    const leased = async () =>
      (
        await db.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries
            WHERE 'msg_' || id = ANY ($1) AND attempts = 0 AND next_attempt_at > now()`,
          [hanging],
        )
      ).rows[0].n as number;
    assert.ok((await leased()) > 0, 'sends in flight hold leases');
    assert.equal(await dispatcher.kill('SIGTERM'), 0);
    assert.equal(await leased(), 0, 'no lease is left behind by the abandoned sends');
  },
);
