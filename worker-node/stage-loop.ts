/**
 * One job's run on this node, in temporal mode: every stage takes the job's devices through the
 * device lock — acquire → onload (with the fencing token) → run → offload → release — so jobs that
 * share a device take turns, and between turns a job's state lives in host memory.
 *
 *   [warm-up]  supervised steps until the probe accuracy target (fresh models only)
 *   step k     generate + train (one native call), evaluation every `evalEvery`, a checkpoint every
 *              `checkpointEvery` and at the end (written while the devices are held)
 *
 * Requests from the daemon are honoured at the next stage boundary (a stage is well under a second
 * for the model sizes here) or at once while waiting for the lock: cancel stops; preempt and drain
 * checkpoint the last completed step, release, and report.
 */
import type { Engine, Profile } from '../native/index.js';
import type { DeviceLockService, Grant } from '../scheduler/device-lock/index.js';
import { LeaseKeeper } from '../scheduler/device-lock/index.js';
import type { CheckpointReport, MetricPoint, StageProfileReport } from '../common/jobs/reports.js';
import type { Outcome, RunnerStart } from './messages.js';

export interface StageLoopDeps {
  engine: Engine;
  locks: DeviceLockService;
  start: RunnerStart;
  saveCheckpoint(step: number): Promise<CheckpointReport>;
  report(r: { metrics: MetricPoint[]; profiles: StageProfileReport[]; deviceSeconds: number }): void;
  checkpointed(c: CheckpointReport): void;
}

export type Request = 'cancel' | 'preempt' | 'drain' | null;

export class StageLoop {
  private request: Request = null;
  private abort = new AbortController();
  private lost: Error | null = null;
  private lastSavedStep: number;
  private readonly recentRewards: number[] = [];
  private completedStep: number;

  constructor(private readonly d: StageLoopDeps) {
    this.completedStep = d.start.resume?.fromOwnRun ? d.start.resume.step : 0;
    this.lastSavedStep = this.completedStep;
  }

  /** From the daemon; the strongest request wins (cancel over preempt over drain). */
  requestStop(r: Exclude<Request, null>): void {
    const rank = { drain: 1, preempt: 2, cancel: 3 } as const;
    if (this.request === null || rank[r] > rank[this.request]) this.request = r;
    this.abort.abort();
  }

  private get devices(): string[] {
    const { nodeId, devices } = this.d.start.placement;
    return devices.map((i) => `${nodeId}/${i}`);
  }

  /**
   * Holds the job's devices for one stage. Returns null if a stop request arrived while waiting.
   * `onload` and `offload` times go into the profile; device-seconds count the whole hold.
   */
  private async withDevices<T>(
    stage: string,
    step: number | null,
    fn: () => Promise<{ value: T; profile?: Profile; tokens?: number; batch?: number }>,
  ): Promise<T | null> {
    let grant: Grant;
    try {
      grant = await this.d.locks.acquire({
        devices: this.devices,
        job: this.d.start.jobId,
        stage,
        holder: `${this.d.start.nodeId}:${process.pid}`,
        priority: this.d.start.priority,
        leaseMs: this.d.start.leaseMs,
        signal: this.request === 'cancel' ? AbortSignal.abort() : this.abort.signal,
      });
    } catch (err) {
      if (this.request) return null;
      throw err;
    }
    const keeper = new LeaseKeeper(this.d.locks, grant, {
      onLost: (err) => {
        this.lost = err;
      },
    });
    const t0 = performance.now();
    let onloadSeconds = 0;
    let offloadSeconds = 0;
    try {
      const token = Math.max(...Object.values(grant.tokens));
      await this.d.engine.onload(token);
      onloadSeconds = (performance.now() - t0) / 1000;
      const out = await fn();
      if (this.lost) throw this.lost;
      const t1 = performance.now();
      await this.d.engine.offload();
      offloadSeconds = (performance.now() - t1) / 1000;
      const seconds = (performance.now() - t0) / 1000;
      this.d.report({
        metrics: [],
        profiles: [
          {
            stage,
            step,
            seconds,
            tokens: out.tokens ?? out.profile?.tokens ?? 0,
            batch: out.batch ?? 0,
            devices: this.devices.length,
            peakBytes: out.profile?.peakArenaBytes ?? 0,
            onloadSeconds,
            offloadSeconds,
          },
        ],
        deviceSeconds: seconds * this.devices.length,
      });
      return out.value;
    } finally {
      keeper.stop();
      await this.d.locks.release(keeper.grant);
    }
  }

  /** Saves the last completed step if it is not saved yet (needs the devices: state is on them). */
  private async checkpointNow(step: number): Promise<void> {
    if (step <= this.lastSavedStep) return;
    const saved = await this.withDevices('checkpoint', step, async () => ({
      value: await this.d.saveCheckpoint(step),
    }));
    if (saved) this.record(saved);
  }

  private record(c: CheckpointReport): void {
    this.lastSavedStep = c.step;
    this.d.checkpointed(c);
  }

  private stopOutcome(): Outcome | 'cancelled' | null {
    if (this.request === 'cancel') return 'cancelled';
    if (this.request === 'preempt') return 'preempted';
    if (this.request === 'drain') return 'drained';
    return null;
  }

  async run(): Promise<{ outcome: Outcome | 'cancelled'; error: string | null }> {
    const { spec } = this.d.start;
    const w = spec.workflow;
    const fresh = !this.d.start.resume;

    if (fresh && w.warmup.maxSteps > 0) {
      const ok = await this.withDevices('warmup', 0, async () => {
        const r = await this.d.engine.warmup({
          maxSteps: w.warmup.maxSteps,
          targetAccuracy: w.warmup.targetAccuracy,
        });
        await this.d.engine.resetOptimizer();
        this.d.report({
          metrics: [{ step: 0, name: 'warmup_probe_accuracy', value: r.probeAccuracy }],
          profiles: [],
          deviceSeconds: 0,
        });
        return { value: true, profile: r.profile };
      });
      if (!ok) return this.stop();
    }

    for (let step = this.completedStep + 1; step <= w.steps; step++) {
      if (this.request) return this.stop();
      const isLast = step === w.steps;
      const result = await this.withDevices('rl_step', step, async () => {
        const { stats, profile } = await this.d.engine.rlStep({
          generate: { numPrompts: w.promptsPerStep, groupSize: w.groupSize, temperature: w.temperature },
          train: { algorithm: w.algorithm, lr: w.learningRate },
        });
        const metrics: MetricPoint[] = [
          { step, name: 'reward_mean', value: stats.rewardMean },
          { step, name: 'reward_std', value: stats.rewardStd },
          { step, name: 'loss', value: stats.loss },
          { step, name: 'kl', value: stats.kl },
          { step, name: 'clip_fraction', value: stats.clipFraction },
          { step, name: 'tokens', value: stats.tokens },
          {
            step,
            name: 'tokens_per_second',
            value: profile.total.seconds > 0 ? stats.tokens / profile.total.seconds : 0,
          },
          { step, name: 'weight_version_lag', value: 0 },
        ];
        let accuracy: number | null = null;
        if (step % w.evalEvery === 0 || isLast) {
          accuracy = (await this.d.engine.evaluate()).accuracy;
          metrics.push({ step, name: 'eval_accuracy', value: accuracy });
        }
        this.recentRewards.push(stats.rewardMean);
        if (this.recentRewards.length > 3) this.recentRewards.shift();
        const rewardAvg = this.recentRewards.reduce((a, b) => a + b, 0) / this.recentRewards.length;
        const reachedReward =
          w.targetReward !== undefined && this.recentRewards.length === 3 && rewardAvg >= w.targetReward;
        const reachedAccuracy =
          w.targetAccuracy !== undefined && accuracy !== null && accuracy >= w.targetAccuracy;
        const done = isLast || reachedReward || reachedAccuracy;
        if (done && accuracy === null) {
          accuracy = (await this.d.engine.evaluate()).accuracy;
          metrics.push({ step, name: 'eval_accuracy', value: accuracy });
        }
        const checkpoint = done || step % w.checkpointEvery === 0 ? await this.d.saveCheckpoint(step) : null;
        this.d.report({ metrics, profiles: [], deviceSeconds: 0 });
        return {
          value: { checkpoint, done },
          profile: profile.total,
          tokens: stats.tokens,
          batch: w.promptsPerStep * w.groupSize,
        };
      });
      if (result === null) return this.stop();
      this.completedStep = step;
      if (result.checkpoint) this.record(result.checkpoint);
      if (result.done) return { outcome: 'succeeded', error: null };
    }
    return { outcome: 'succeeded', error: null };
  }

  private async stop(): Promise<{ outcome: Outcome | 'cancelled'; error: string | null }> {
    const outcome = this.stopOutcome()!;
    if (outcome === 'preempted' || outcome === 'drained')
      await this.checkpointNowUnabortable(this.completedStep);
    return { outcome, error: null };
  }

  /** The stop request aborted the shared signal; the final checkpoint must still get the devices. */
  private async checkpointNowUnabortable(step: number): Promise<void> {
    const request = this.request;
    this.request = null;
    this.abort = new AbortController();
    try {
      await this.checkpointNow(step);
    } finally {
      if (this.request === null) this.request = request;
    }
  }
}
