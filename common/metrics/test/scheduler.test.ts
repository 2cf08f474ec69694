import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSchedulerMetrics } from '../scheduler.js';

interface FakeState {
  jobs: unknown[];
  queued: unknown[];
  nodes: unknown[];
  reasons?: unknown[];
  lease?: unknown[];
  tenants?: unknown[];
}

/** A stand-in for pg.Pool answering the reads of a scrape from `state`. */
function fakePool(state: FakeState | 'down') {
  let queries = 0;
  return {
    get queries() {
      return queries;
    },
    query: async (sql: string) => {
      queries++;
      if (state === 'down') throw new Error('connection refused');
      if (sql.includes('FROM nodes')) return { rows: state.nodes };
      if (sql.includes('FROM scheduler_leases')) return { rows: state.lease ?? [] };
      if (sql.includes('FROM tenants')) return { rows: state.tenants ?? [] };
      if (sql.includes('wait_reason')) return { rows: state.reasons ?? [] };
      if (sql.includes("status = 'queued'")) return { rows: state.queued };
      return { rows: state.jobs };
    },
  };
}

test('scheduler gauges are read from the database once per scrape and forget emptied pools', async () => {
  const state: FakeState = {
    jobs: [
      { pool: 'default', status: 'queued', n: '3' },
      { pool: 'h100', status: 'running', n: '2' },
    ],
    queued: [{ pool: 'default', n: '3', wait: 42.5 }],
    nodes: [
      { pool: 'default', status: 'lost', n: '1', cordoned: '0' },
      { pool: 'default', status: 'ready', n: '3', cordoned: '2' },
    ],
    reasons: [
      { pool: 'default', reason: 'quota', n: '2' },
      { pool: 'default', reason: 'none', n: '1' },
    ],
    lease: [{ epoch: '7' }],
    tenants: [{ id: 'aaaaaaaa-0000-0000-0000-000000000001', name: 'acme' }],
  };
  const pool = fakePool(state);
  let capacity = [
    {
      pool: 'empty',
      devices: 0,
      idleDevices: 0,
      busyDevices: 0,
      queuedDevices: 3,
      queuedJobs: 2,
      runningJobs: 0,
      wantedDevices: 3,
    },
  ];
  let shares = [
    {
      tenantId: 'aaaaaaaa-0000-0000-0000-000000000001',
      pool: 'default',
      share: 0.5,
      entitlement: 0.75,
      devices: 2,
      demand: 3,
    },
  ];
  const m = createSchedulerMetrics(pool as never, {
    capacity: async () => capacity,
    shares: async () => shares,
  });
  m.sweepDone(2);
  m.leadership(() => true);
  const text = await m.registry.metrics();
  assert.equal(pool.queries, 6, 'one read of each kind for all the gauges');
  assert.match(text, /^timeshare_jobs\{pool="default",status="queued"\} 3$/m);
  assert.match(text, /^timeshare_jobs\{pool="h100",status="running"\} 2$/m);
  assert.match(text, /^timeshare_queue_depth_jobs\{pool="default"\} 3$/m);
  assert.match(text, /^timeshare_queue_oldest_wait_seconds\{pool="default"\} 42.5$/m);
  assert.match(text, /^timeshare_nodes\{pool="default",status="lost"\} 1$/m);
  assert.match(text, /^timeshare_nodes\{pool="default",status="ready"\} 3$/m, 'cordoned nodes still counted');
  assert.match(text, /^timeshare_nodes_cordoned\{pool="default",status="ready"\} 2$/m);
  assert.match(text, /^timeshare_nodes_cordoned\{pool="default",status="lost"\} 0$/m);
  assert.match(text, /^timeshare_scheduler_node_lost_requeues_total 2$/m);
  assert.match(text, /^timeshare_scheduler_liveness_sweeps_total\{result="ok"\} 1$/m);
  assert.match(text, /^timeshare_scheduler_leader 1$/m);
  assert.match(text, /^timeshare_pool_wanted_devices\{pool="empty"\} 3$/m);
  assert.match(text, /^timeshare_pool_queued_devices\{pool="empty"\} 3$/m);
  assert.match(text, /^timeshare_pool_idle_devices\{pool="empty"\} 0$/m);
  assert.match(text, /^timeshare_queue_waiting_jobs\{pool="default",reason="quota"\} 2$/m);
  assert.match(text, /^timeshare_queue_waiting_jobs\{pool="default",reason="none"\} 1$/m);
  assert.match(text, /^timeshare_scheduler_leader_epoch 7$/m);
  assert.match(text, /^timeshare_tenant_share_ratio\{pool="default",tenant="acme"\} 0.5$/m);
  assert.match(text, /^timeshare_tenant_entitlement_ratio\{pool="default",tenant="acme"\} 0.75$/m);
  assert.match(text, /^timeshare_tenant_held_devices\{pool="default",tenant="acme"\} 2$/m);
  assert.match(text, /^timeshare_tenant_queued_devices\{pool="default",tenant="acme"\} 3$/m);

  state.queued = [];
  state.reasons = [];
  capacity = [];
  shares = [];
  const later = await m.registry.metrics();
  assert.doesNotMatch(later, /^timeshare_queue_depth_jobs\{/m, 'an emptied queue is not reported stale');
  assert.doesNotMatch(later, /^timeshare_pool_wanted_devices\{/m, 'nor a pool the round no longer sees');
  assert.doesNotMatch(later, /^timeshare_queue_waiting_jobs\{/m, 'nor a wait reason no job has');
  assert.doesNotMatch(later, /^timeshare_tenant_share_ratio\{/m, 'nor a tenant that holds and wants nothing');
});

test('a failed database read is counted, not thrown at the scraper', async () => {
  const m = createSchedulerMetrics(fakePool('down') as never);
  const text = await m.registry.metrics();
  assert.match(text, /^timeshare_scheduler_metrics_query_errors_total 1$/m);
});

test("the leader's rounds are exported by phase, with what they placed and noticed", async () => {
  const m = createSchedulerMetrics(fakePool({ jobs: [], queued: [], nodes: [] }) as never);
  m.roundDone({
    seconds: { read: 0.02, schedule: 0.04, apply: 0.3, publish: 0.001, total: 0.361 },
    placed: 5,
    noticeReasons: ['reclaim', 'aging'],
  });
  m.roundDone({
    seconds: { read: 2, schedule: 0.04, apply: 0.01, publish: 0.001, total: 2.051 },
    placed: 0,
    noticeReasons: ['reclaim'],
  });
  const text = await m.registry.metrics();
  assert.match(text, /^timeshare_scheduler_round_duration_seconds_count\{phase="total"\} 2$/m);
  assert.match(text, /^timeshare_scheduler_round_duration_seconds_bucket\{le="0.5",phase="total"\} 1$/m);
  assert.match(text, /^timeshare_scheduler_round_duration_seconds_bucket\{le="0.025",phase="read"\} 1$/m);
  assert.match(text, /^timeshare_scheduler_round_duration_seconds_bucket\{le="2.5",phase="read"\} 2$/m);
  assert.match(text, /^timeshare_scheduler_placements_total 5$/m);
  assert.match(text, /^timeshare_scheduler_preemption_notices_total\{reason="reclaim"\} 2$/m);
  assert.match(text, /^timeshare_scheduler_preemption_notices_total\{reason="aging"\} 1$/m);
  assert.match(
    text,
    /^timeshare_scheduler_preemption_notices_total\{reason="compact"\} 0$/m,
    'every reason is there from the start',
  );
});
