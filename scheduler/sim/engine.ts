/**
 * The discrete-event simulation. Jobs arrive, rounds run the production `schedule()` on a snapshot
 * of the simulated state, and its decisions are applied: placements start after the round's
 * decision cost, notices start a checkpoint, take-backs requeue. A round runs after every event
 * that changes what the scheduler could decide (arrival, completion, a preemption done, a grace
 * running out) and every `tickSeconds` while jobs wait or notices are out (aging and minimum run
 * times turn on the clock alone).
 */
import { performance } from 'node:perf_hooks';
import { schedule } from '../core/schedule.js';
import type { Decisions, Policy, Snapshot } from '../core/types.js';
import { DeviceLocks } from './devices.js';
import { Clock } from './events.js';
import { JobRun } from './job-run.js';
import { defaultPhysics, stepFigures, type SimPhysics, type SimWorkload } from './model.js';
import { Recorder } from './recorder.js';
import { Rng } from './rng.js';
import { buildSnapshot, fromMs, simNodes, toMs, type TenantUsage } from './snapshot.js';

export interface SimResult {
  workload: SimWorkload;
  policy: Policy;
  jobs: JobRun[];
  recorder: Recorder;
  /** Simulated seconds at the end (the horizon, or the last completion). */
  end: number;
  devices: number;
  /**
   * The state at the last arrival, the end of the window in which work keeps coming: each job's
   * steps done then (by job index), and how many jobs were still queued (0: not saturated).
   */
  atLastArrival: { at: number; stepsDone: number[]; queued: number } | null;
}

export interface SimOptions {
  physics?: SimPhysics;
  seed?: number;
  /** Sees every round's snapshot and decisions (tests, diagnostics). */
  observe?: (snapshot: Snapshot, decisions: Decisions, now: number) => void;
  /**
   * Jobs are submitted with `mode: "auto"`, so the stage planner chooses temporal, spatial or hybrid
   * plans from their profiles; otherwise every job runs temporally, as its user configured it.
   */
  planner?: boolean;
  /**
   * Nodes fail: each after an exponentially distributed time up (mean `mtbfHours`, seeded), and
   * comes back `repairHours` later, empty. The scheduler learns of a failure `detectSeconds` later
   * (production's heartbeat timeout); until then the node's jobs stand still and it may still be
   * given work. Its jobs then go back to the queue (`node_lost`) from their last checkpoint.
   */
  failures?: { mtbfHours: number; repairHours: number; detectSeconds: number };
}

export function simulate(workload: SimWorkload, policy: Policy, opts: SimOptions = {}): SimResult {
  const physics = opts.physics ?? defaultPhysics;
  const seed = opts.seed ?? 1;
  const clock = new Clock();
  const locks = new DeviceLocks(physics.switchBytesPerSecond);
  const rec = new Recorder();
  const nodes = simNodes(workload.cluster);
  const rng = new Rng(seed);
  const usage = new Map<string, TenantUsage>(
    workload.tenants.map((t) => [t.id, { deviceSeconds: 0, memoryByteSeconds: 0, periodDeviceSeconds: 0 }]),
  );
  let queueSeq = 0;
  let usageAt = 0;
  const pendingRounds = new Set<number>();

  const requestRound = (t: number) => {
    if (pendingRounds.has(t)) return;
    pendingRounds.add(t);
    clock.at(t, () => round(t), 1);
  };
  const requeue = (j: JobRun, reason: 'preempted' | 'node_lost' = 'preempted') => {
    j.requeueReason = reason;
    j.enqueue(clock.now, queueSeq++);
  };
  const hooks = {
    finished: () => requestRound(clock.now),
    checkpointedAfterNotice: (j: JobRun) => {
      requeue(j);
      requestRound(clock.now);
    },
    deviceTime: (kind: 'useful' | 'switch' | 'checkpoint', s: number) => rec.deviceTime(kind, s),
    progressed: (j: JobRun, steps: number) =>
      rec.progressed(clock.now, steps * j.spec.devices * stepFigures(j.spec.shape).step),
  };
  const jobs = workload.jobs.map((s, i) => new JobRun(s, rng.fork(i + 1), clock, locks, physics, hooks));
  const byId = new Map(jobs.map((j) => [j.spec.id, j]));
  for (const j of jobs)
    clock.at(j.spec.arrival, () => {
      j.enqueue(clock.now, queueSeq++);
      requestRound(clock.now);
    });

  // Decayed usage (Kueue's admission fair sharing: consumed ← consumed·½^(dt/h) + usage·dt).
  const decayUsage = (now: number) => {
    const dt = now - usageAt;
    usageAt = now;
    if (dt <= 0) return;
    const keep = 0.5 ** (dt / physics.usageHalfLifeSeconds);
    const held = new Map<string, { devices: number; bytes: number }>();
    for (const j of jobs)
      if (j.status === 'running') {
        const h = held.get(j.spec.tenant) ?? { devices: 0, bytes: 0 };
        h.devices += j.devices.length;
        h.bytes += j.devices.length * j.spec.deviceBytes;
        held.set(j.spec.tenant, h);
      }
    for (const [id, u] of usage) {
      const h = held.get(id) ?? { devices: 0, bytes: 0 };
      u.deviceSeconds = u.deviceSeconds * keep + h.devices * dt;
      u.memoryByteSeconds = u.memoryByteSeconds * keep + h.bytes * dt;
      u.periodDeviceSeconds += h.devices * dt;
    }
  };

  function round(t: number): void {
    pendingRounds.delete(t);
    const now = clock.now;
    decayUsage(now);
    const snapshot = buildSnapshot(
      lost.size ? nodes.filter((n) => !lost.has(n.id)) : nodes,
      workload.tenants,
      usage,
      jobs,
      {
        planner: opts.planner ?? false,
        deviceMemoryBytes: workload.cluster.deviceMemoryBytes,
      },
    );
    const started = performance.now();
    const d = schedule(snapshot, policy, toMs(now));
    rec.roundWallMs.push(performance.now() - started);
    rec.sharesAt(now, d.shares);
    rec.predictionsAt(snapshot.running);
    for (const e of d.queue)
      if (!rec.firstEstimate.has(e.jobId) && byId.get(e.jobId)!.attempts === 0)
        rec.firstEstimate.set(e.jobId, e.estimatedStartAt === null ? null : fromMs(e.estimatedStartAt));
    opts.observe?.(snapshot, d, now);
    apply(d, now);
    checkInvariants();
    const queued = jobs.some((j) => j.status === 'queued');
    rec.waitingFrom(now, queued);
    const waiting = queued || jobs.some((j) => j.status === 'running' && j.notice !== null);
    const next = now + physics.tickSeconds;
    if (waiting && ![...pendingRounds].some((p) => p <= next)) requestRound(next);
  }

  function apply(d: Decisions, now: number): void {
    for (const r of d.replan) {
      if (r.kind === 'fitted') continue;
      const j = byId.get(r.jobId)!;
      j.lastReplan = {
        kind: r.kind,
        at: toMs(now),
        predictedStepSeconds: r.predictedStepSeconds,
        beforeStepSeconds: r.beforeStepSeconds,
      };
      rec.replans[r.kind] = (rec.replans[r.kind] ?? 0) + 1;
    }
    for (const tb of d.takeBack) {
      const j = byId.get(tb.jobId)!;
      if (j.status !== 'running') continue;
      j.takeBack();
      rec.takeBacks++;
      requeue(j);
    }
    // Before the notices, as production writes them: a withdrawn job may be given a new one.
    for (const w of d.withdraw) {
      const j = byId.get(w.jobId)!;
      if (j.status === 'running') j.noticeWithdrawn();
    }
    for (const p of d.preempt) {
      const j = byId.get(p.jobId)!;
      if (j.status !== 'running' || j.notice !== null) {
        rec.violation(`${p.jobId} preempted while ${j.status}${j.notice !== null ? ' under notice' : ''}`);
        continue;
      }
      if (now - j.runStartedAt < policy.minRunSeconds - 1e-3)
        rec.violation(`${p.jobId} preempted ${(now - j.runStartedAt).toFixed(1)} s after its run started`);
      j.notify(policy.preemptGraceSeconds, p.reason, p.moveTo, p.forJobId);
      const preemptor = byId.get(p.forJobId);
      if (preemptor && preemptor.attempts === 0) rec.noticeFor(p.forJobId, p.reason);
      rec.preemptions++;
      rec.preemptionsByReason[p.reason] = (rec.preemptionsByReason[p.reason] ?? 0) + 1;
      requestRound(now + policy.preemptGraceSeconds + 0.001);
    }
    const delay = physics.decisionSecondsPerJob * (d.place.length + d.preempt.length);
    for (const p of d.place) {
      const j = byId.get(p.jobId)!;
      if (j.status !== 'queued') {
        rec.violation(`${p.jobId} placed while ${j.status}`);
        continue;
      }
      rec.placements++;
      if (p.sharedWith > 0) rec.sharedPlacements++;
      if (j.attempts === 0) rec.firstStart(p.jobId, p.sharedWith > 0);
      const planKind =
        p.mode === 'temporal' && p.plan.partialTail > 0 ? 'temporal with partial rollouts' : p.mode;
      rec.placementsByMode[planKind] = (rec.placementsByMode[planKind] ?? 0) + 1;
      if (lost.has(p.nodeId)) rec.violation(`${p.jobId} placed on ${p.nodeId}, known lost`);
      j.start(p.nodeId, p.devices, delay, {
        mode: p.mode,
        generate: p.stages.generate,
        train: p.stages.train,
        microBatches: p.plan.microBatches ?? 1,
        partialTail: p.plan.partialTail,
      });
      // Placed on a node that died unnoticed: the job never starts there.
      if (down.has(p.nodeId)) j.crash();
    }
    if (d.takeBack.length > 0) requestRound(now);
  }

  function checkInvariants(): void {
    const perDevice = new Map<string, number>();
    const perTenant = new Map<string, number>();
    const bound = policy.timeSharing ? policy.maxJobsPerDevice : 1;
    for (const j of jobs) {
      if (j.status !== 'running') continue;
      if (lost.has(j.nodeId)) rec.violation(`${j.spec.id} runs on ${j.nodeId}, known lost`);
      // A plan may use fewer devices than the spec's when more would not make it faster.
      if (j.devices.length < 1 || j.devices.length > j.spec.devices)
        rec.violation(`${j.spec.id} holds ${j.devices.length} devices`);
      if (j.spec.deviceBytes > workload.cluster.deviceMemoryBytes)
        rec.violation(`${j.spec.id} does not fit device memory`);
      perTenant.set(j.spec.tenant, (perTenant.get(j.spec.tenant) ?? 0) + j.devices.length);
      for (const i of j.devices) {
        const key = `${j.nodeId}/${i}`;
        const n = (perDevice.get(key) ?? 0) + 1;
        perDevice.set(key, n);
        if (n > bound) rec.violation(`${key} holds ${n} jobs`);
      }
    }
    for (const t of workload.tenants)
      if ((perTenant.get(t.id) ?? 0) > t.maxConcurrentDevices)
        rec.violation(
          `${t.id} holds ${perTenant.get(t.id)} devices over its quota ${t.maxConcurrentDevices}`,
        );
  }

  // Node failures: `down` from the failure to the repair, `lost` from its detection to the repair.
  const down = new Set<string>();
  const lost = new Set<string>();
  const failures = opts.failures;
  if (failures) {
    const horizonEnd = workload.horizonSeconds ?? Infinity;
    nodes.forEach((n, i) => {
      const draw = rng.fork(100_000 + i);
      const fail = (from: number) => {
        const at = from + draw.exponential(failures.mtbfHours * 3600);
        if (at >= horizonEnd) return;
        clock.at(at, () => {
          if (jobs.every((j) => j.status === 'done')) return;
          down.add(n.id);
          rec.nodeFailures++;
          for (const j of jobs) if (j.status === 'running' && j.nodeId === n.id) j.crash();
          clock.at(at + failures.detectSeconds, () => {
            lost.add(n.id);
            for (const j of jobs)
              if (j.status === 'running' && j.nodeId === n.id) {
                j.nodeLost();
                rec.nodeLostJobs++;
                requeue(j, 'node_lost');
              }
            requestRound(clock.now);
          });
          clock.at(at + failures.repairHours * 3600, () => {
            down.delete(n.id);
            lost.delete(n.id);
            requestRound(clock.now);
            fail(clock.now);
          });
        });
      };
      fail(0);
    });
  }

  let atLastArrival: SimResult['atLastArrival'] = null;
  const lastArrival = Math.max(0, ...workload.jobs.map((s) => s.arrival));
  // After that instant's arrivals and round (order 2), as a round would see it next.
  clock.at(
    lastArrival,
    () => {
      atLastArrival = {
        at: lastArrival,
        stepsDone: jobs.map((j) => j.stepsDone),
        queued: jobs.filter((j) => j.status === 'queued').length,
      };
    },
    2,
  );
  const horizon = workload.horizonSeconds ?? Infinity;
  while (clock.step(horizon));
  const end = Number.isFinite(horizon) ? horizon : Math.max(0, ...jobs.map((j) => j.finishedAt ?? 0));
  rec.sharesAt(end, null);
  return {
    workload,
    policy,
    jobs,
    recorder: rec,
    end,
    devices: nodes.length * workload.cluster.devicesPerNode,
    atLastArrival,
  };
}
