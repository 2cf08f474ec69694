import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSchedulerMetrics } from '../scheduler.js';

/** A stand-in for pg.Pool answering the three reads of a scrape from `state`. */
function fakePool(state: { jobs: unknown[]; queued: unknown[]; nodes: unknown[] } | 'down') {
  let queries = 0;
  return {
    get queries() {
      return queries;
    },
    query: async (sql: string) => {
      queries++;
      if (state === 'down') throw new Error('connection refused');
      if (sql.includes('FROM nodes')) return { rows: state.nodes };
      if (sql.includes("status = 'queued'")) return { rows: state.queued };
      return { rows: state.jobs };
    },
  };
}

test('scheduler gauges are read from the database once per scrape and forget emptied pools', async () => {
  const state = {
    jobs: [
      { pool: 'default', status: 'queued', n: '3' },
      { pool: 'h100', status: 'running', n: '2' },
    ],
    queued: [{ pool: 'default', n: '3', wait: 42.5 }],
    nodes: [{ pool: 'default', status: 'lost', n: '1' }],
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
  const m = createSchedulerMetrics(pool as never, async () => capacity);
  m.sweepDone(2);
  m.leadership(() => true);
  const text = await m.registry.metrics();
  assert.equal(pool.queries, 3, 'one read of each kind for four gauges');
  assert.match(text, /^timeshare_jobs\{pool="default",status="queued"\} 3$/m);
  assert.match(text, /^timeshare_jobs\{pool="h100",status="running"\} 2$/m);
  assert.match(text, /^timeshare_queue_depth_jobs\{pool="default"\} 3$/m);
  assert.match(text, /^timeshare_queue_oldest_wait_seconds\{pool="default"\} 42.5$/m);
  assert.match(text, /^timeshare_nodes\{pool="default",status="lost"\} 1$/m);
  assert.match(text, /^timeshare_scheduler_node_lost_requeues_total 2$/m);
  assert.match(text, /^timeshare_scheduler_liveness_sweeps_total\{result="ok"\} 1$/m);
  assert.match(text, /^timeshare_scheduler_leader 1$/m);
  assert.match(text, /^timeshare_pool_wanted_devices\{pool="empty"\} 3$/m);
  assert.match(text, /^timeshare_pool_queued_devices\{pool="empty"\} 3$/m);
  assert.match(text, /^timeshare_pool_idle_devices\{pool="empty"\} 0$/m);

  state.queued = [];
  capacity = [];
  const later = await m.registry.metrics();
  assert.doesNotMatch(later, /^timeshare_queue_depth_jobs\{/m, 'an emptied queue is not reported stale');
  assert.doesNotMatch(later, /^timeshare_pool_wanted_devices\{/m, 'nor a pool the round no longer sees');
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
    preempted: 2,
  });
  m.roundDone({
    seconds: { read: 2, schedule: 0.04, apply: 0.01, publish: 0.001, total: 2.051 },
    placed: 0,
    preempted: 1,
  });
  const text = await m.registry.metrics();
  assert.match(text, /^timeshare_scheduler_round_duration_seconds_count\{phase="total"\} 2$/m);
  assert.match(text, /^timeshare_scheduler_round_duration_seconds_bucket\{le="0.5",phase="total"\} 1$/m);
  assert.match(text, /^timeshare_scheduler_round_duration_seconds_bucket\{le="0.025",phase="read"\} 1$/m);
  assert.match(text, /^timeshare_scheduler_round_duration_seconds_bucket\{le="2.5",phase="read"\} 2$/m);
  assert.match(text, /^timeshare_scheduler_placements_total 5$/m);
  assert.match(text, /^timeshare_scheduler_preemption_notices_total 3$/m);
});
