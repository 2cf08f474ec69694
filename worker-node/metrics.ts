/**
 * The worker daemon's metrics, read from what its job processes already report over IPC (stage
 * profiles, lock waits, checkpoints), so a job process needs no endpoint of its own and its metrics
 * survive its exit. Labels are the node's pool and the stage: never a job id, which would make a
 * new series per job (per-job figures are in the API's job metrics).
 */
import client from 'prom-client';
import type { RunnerToDaemon } from './messages.js';
import { deviceStates, splitReport } from '../common/node-protocol/device-time.js';

// Stages run from milliseconds (a tiny model's step) to minutes (a large warm-up).
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export function createWorkerMetrics(pool: string) {
  const registry = new client.Registry();
  registry.setDefaultLabels({ pool });
  client.collectDefaultMetrics({ register: registry, prefix: 'timeshare_worker_' });

  const lockWait = new client.Histogram({
    name: 'timeshare_device_lock_wait_seconds',
    help: 'Time a stage waited to acquire its devices',
    labelNames: ['stage'] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  const lockHold = new client.Histogram({
    name: 'timeshare_device_lock_hold_seconds',
    help: 'Time a stage held its devices (onload + run + offload)',
    labelNames: ['stage'] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  const stepSeconds = new client.Histogram({
    name: 'timeshare_engine_step_seconds',
    help: 'Engine time of one stage step on its devices, without onload and offload',
    labelNames: ['stage'] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  const switchSeconds = new client.Histogram({
    name: 'timeshare_engine_switch_seconds',
    help: 'Context-switch cost of a stage: moving its state onto (onload) or off (offload) the devices',
    labelNames: ['direction'] as const,
    buckets: SECONDS,
    registers: [registry],
  });
  const tokens = new client.Counter({
    name: 'timeshare_engine_tokens_total',
    help: 'Tokens processed by the engine (rate() gives tokens per second)',
    labelNames: ['stage'] as const,
    registers: [registry],
  });
  const deviceSeconds = new client.Counter({
    name: 'timeshare_device_busy_seconds_total',
    help: 'Device-seconds held by stages (rate() over devices gives utilisation)',
    registers: [registry],
  });
  const deviceTime = new client.Counter({
    name: 'timeshare_device_seconds_total',
    help: 'Device-seconds held by stages, by state: running (engine computing), switching (onload/offload), idle (held, neither)',
    labelNames: ['state'] as const,
    registers: [registry],
  });
  const checkpointBytes = new client.Counter({
    name: 'timeshare_checkpoint_written_bytes_total',
    help: 'Bytes of model checkpoints written to storage',
    registers: [registry],
  });
  const checkpointSeconds = new client.Histogram({
    name: 'timeshare_checkpoint_duration_seconds',
    help: 'Time to save one checkpoint (write, hash, upload), without onload and offload',
    buckets: SECONDS,
    registers: [registry],
  });
  let runningNow = () => 0;
  new client.Gauge({
    name: 'timeshare_worker_jobs_running',
    help: 'Job processes running on this node',
    registers: [registry],
    collect() {
      this.set(runningNow());
    },
  });
  const devices = new client.Gauge({
    name: 'timeshare_worker_devices',
    help: 'Devices this node offers',
    registers: [registry],
  });
  const jobEnds = new client.Counter({
    name: 'timeshare_worker_job_runs_total',
    help: 'Job runs ended on this node, by outcome (crashed: the process died without saying)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  let outboxNow = () => 0;
  new client.Gauge({
    name: 'timeshare_worker_outbox_reports',
    help: "Job reports waiting in this node's outbox for the control plane (unreachable, throttling, or older than the report)",
    registers: [registry],
    collect() {
      this.set(outboxNow());
    },
  });
  const dropped = new client.Counter({
    name: 'timeshare_worker_reports_dropped_total',
    help: 'Job reports the control plane refused for good (4xx), by kind: start, report, checkpoint, finish',
    labelNames: ['kind'] as const,
    registers: [registry],
  });

  /** Counts one IPC message from a job process. */
  function observe(m: RunnerToDaemon): void {
    if (m.t === 'report') {
      for (const w of m.lockWaits ?? []) lockWait.observe({ stage: w.stage }, w.seconds);
      for (const p of m.profiles) {
        const run = Math.max(0, p.seconds - p.onloadSeconds - p.offloadSeconds);
        lockHold.observe({ stage: p.stage }, p.seconds);
        switchSeconds.observe({ direction: 'onload' }, p.onloadSeconds);
        switchSeconds.observe({ direction: 'offload' }, p.offloadSeconds);
        if (p.stage === 'checkpoint') checkpointSeconds.observe(run);
        else stepSeconds.observe({ stage: p.stage }, run);
        if (p.tokens > 0) tokens.inc({ stage: p.stage }, p.tokens);
      }
      if (m.deviceSeconds > 0) {
        deviceSeconds.inc(m.deviceSeconds);
        const split = splitReport(m.profiles, m.deviceSeconds);
        for (const state of deviceStates) deviceTime.inc({ state }, split[state]);
      }
    } else if (m.t === 'checkpoint') {
      checkpointBytes.inc(m.sizeBytes);
    } else if (m.t === 'finished') {
      jobEnds.inc({ outcome: m.outcome });
    }
  }

  return {
    registry,
    observe,
    crashed: () => jobEnds.inc({ outcome: 'crashed' }),
    /** Where the gauge of running jobs reads its value at scrape time. */
    countRunning: (fn: () => number) => {
      runningNow = fn;
    },
    setDevices: (n: number) => devices.set(n),
    /** Where the outbox gauge reads its value at scrape time. */
    countOutbox: (fn: () => number) => {
      outboxNow = fn;
    },
    dropped: (kind: 'start' | 'report' | 'checkpoint' | 'finish') => dropped.inc({ kind }),
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
