/**
 * What a run measures as it goes: device time by kind, each round's wall time, preemptions,
 * each tenant's share and entitlement integrated over time (from the round's own share views),
 * each job's estimated start as the first round it waited through showed it, and invariant
 * violations (a job placed twice, a device over its group bound or memory, a quota exceeded) that
 * tests assert never happen.
 */
import type { RunningJob, TenantShareView } from '../core/types.js';
import type { DeviceTimeKind } from './job-run.js';

export class Recorder {
  readonly deviceSeconds: Record<DeviceTimeKind, number> = { useful: 0, switch: 0, checkpoint: 0 };
  readonly roundWallMs: number[] = [];
  readonly violations: string[] = [];
  preemptions = 0;
  /** Preemption notices by reason (priority, reclaim, aging, replan, compact). */
  readonly preemptionsByReason: Record<string, number> = {};
  placements = 0;
  sharedPlacements = 0;
  /** Placements by the mode of their plan. */
  readonly placementsByMode: Record<string, number> = {};
  /** Re-planning decisions by kind (move, decline, measured). */
  readonly replans: Record<string, number> = {};
  takeBacks = 0;
  /** Node failures, and jobs that went back to the queue because their node was found lost. */
  nodeFailures = 0;
  nodeLostJobs = 0;
  /** Per tenant: ∫ share dt and ∫ entitlement dt (fractions of the pool × seconds). */
  readonly shares = new Map<string, { share: number; entitlement: number }>();
  private last: { at: number; views: TenantShareView[] } | null = null;
  /**
   * Per job that waited after its submission: the `estimatedStartAt` the first round it waited
   * through gave it (seconds; null: no estimate), what a tenant sees right after submitting.
   */
  readonly firstEstimate = new Map<string, number | null>();
  /**
   * How each job first started: `free` on devices nobody held, `joined` a time-share group, or the
   * reason of the first notice sent for it while it waited (`reclaim`, `aging`, `compact`,
   * `priority`): what the estimate has to foresee.
   */
  readonly startedBy = new Map<string, string>();
  private readonly noticedFor = new Map<string, string>();
  /**
   * Per temporal placement that ran alone on its devices (by job and placement time): its measured
   * step since placed ÷ the step its plan predicted, as the latest round after 5 steps saw it, and
   * whether the plan carried stragglers over (partial rollouts). A placement that ever shared a
   * device is left out (its steps wait for the lock).
   */
  readonly stepPredictions = new Map<string, { ratio: number; partial: boolean; alone: boolean }>();
  /**
   * Net work done as it changes: at each `progressAt[i]`, the cumulative `progress[i]` (steps done
   * less steps lost, each weighed by its job's device-seconds per step alone).
   */
  readonly progressAt: number[] = [];
  readonly progress: number[] = [];
  /** Whether any job waits in the queue, at each change: from `waitingAt[i]` on, `waiting[i]`. */
  readonly waitingAt: number[] = [];
  readonly waiting: boolean[] = [];

  progressed(now: number, work: number): void {
    const last = this.progress.length ? this.progress[this.progress.length - 1]! : 0;
    if (this.progressAt[this.progressAt.length - 1] === now)
      this.progress[this.progress.length - 1] = last + work;
    else {
      this.progressAt.push(now);
      this.progress.push(last + work);
    }
  }

  waitingFrom(now: number, waiting: boolean): void {
    if (this.waiting[this.waiting.length - 1] === waiting) return;
    this.waitingAt.push(now);
    this.waiting.push(waiting);
  }

  deviceTime(kind: DeviceTimeKind, seconds: number): void {
    this.deviceSeconds[kind] += seconds;
  }

  /** Closes the interval since the last round's share views, and opens one with these. */
  sharesAt(now: number, views: TenantShareView[] | null): void {
    if (this.last) {
      const dt = now - this.last.at;
      for (const v of this.last.views) {
        const s = this.shares.get(v.tenantId) ?? { share: 0, entitlement: 0 };
        s.share += v.share * dt;
        s.entitlement += v.entitlement * dt;
        this.shares.set(v.tenantId, s);
      }
    }
    this.last = views ? { at: now, views } : null;
  }

  /** A notice sent to free devices for `jobId`, which has not started yet. */
  noticeFor(jobId: string, reason: string): void {
    if (!this.noticedFor.has(jobId)) this.noticedFor.set(jobId, reason);
  }

  /** A job's first start, beside others on its devices or not. */
  firstStart(jobId: string, shared: boolean): void {
    this.startedBy.set(jobId, this.noticedFor.get(jobId) ?? (shared ? 'joined' : 'free'));
  }

  violation(message: string): void {
    if (this.violations.length < 20) this.violations.push(message);
  }

  /** Reads one round's running jobs into `stepPredictions`. */
  predictionsAt(running: readonly RunningJob[]): void {
    const holders = new Map<string, number>();
    for (const r of running)
      for (const d of r.devices) holders.set(`${r.nodeId}/${d}`, (holders.get(`${r.nodeId}/${d}`) ?? 0) + 1);
    for (const r of running) {
      if (r.plan.mode !== 'temporal') continue;
      const key = `${r.id}@${r.placedAt}`;
      const alone = r.devices.every((d) => holders.get(`${r.nodeId}/${d}`) === 1);
      const seen = this.stepPredictions.get(key);
      if (seen && !seen.alone) continue;
      const since = r.replan?.sincePlaced;
      const ratio = since && since.steps >= 5 ? since.stepSeconds / r.plan.stepSeconds : NaN;
      this.stepPredictions.set(key, { ratio, partial: r.plan.partialTail > 0, alone });
    }
  }
}
