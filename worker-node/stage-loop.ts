/**
 * One job's run on this node. Every stage takes its devices through the device lock — acquire →
 * onload (with the fencing token) → run → offload → release — so jobs that share a device take
 * turns, and between turns a job's state lives in host memory.
 *
 *   [warm-up]  supervised steps until the probe accuracy target (fresh models only)
 *   step k     temporal: generate + train in one native call on all the job's devices;
 *              spatial: generation and training pipelined on disjoint halves, in `microBatches`
 *              micro-batches per step (runSpatial); at step boundaries the reactive balancer may
 *              move one device between the halves (reactive-balancer.ts, rebalance-move.ts);
 *              evaluation every `evalEvery`, a checkpoint every `checkpointEvery` and at the end
 *              (written while the learner's devices are held)
 *
 * Requests from the daemon are honoured at the next stage (or micro-batch) boundary (a stage is well under a second
 * for the model sizes here) or at once while waiting for the lock: cancel stops; preempt and drain
 * checkpoint the last completed step, release, and report. A temporal step with a step to save
 * keeps its place in the lock's queue through a preempt or a drain and decides at its turn
 * (withDevices), so that a notice withdrawn meanwhile lets the job run on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine, Profile, Rollouts, TrainStats } from '../native/index.js';
import type { DeviceLockService, Grant } from '../common/device-lock/index.js';
import { LeaseKeeper, WaiterExpiredError } from '../common/device-lock/index.js';
import { isLockOutage, LockOutageError } from './lock-outage.js';
import type { SavedCheckpoint, MetricPoint, StageProfileReport } from '../common/jobs/reports.js';
import type { FinishReason, NodeJobEvent, StageDevices } from '../common/node-protocol/index.js';
import type { BalanceDecision, BalancerConfig } from './balancer.js';
import { movedStages } from './balancer.js';
import { ReactiveBalancer } from './reactive-balancer.js';
import { swapEngines, type EngineFactory } from './rebalance-move.js';
import type { Outcome, RunEnd, RunnerStart } from './messages.js';
import { MicroBatchPipe } from './micro-batch-pipe.js';
import { WorkClock } from './work-clock.js';
import { addStaleness, noStaleness, stalenessMetrics, stalenessOf } from '../common/staleness.js';

type StepStats = Omit<TrainStats, 'profile'>;

interface HoldResult<T> {
  value: T;
  profile?: Profile;
  tokens?: number;
  batch?: number;
  /** Stages run inside one hold (temporal): reported as one profile row each. */
  parts?: {
    stage: string;
    seconds: number;
    tokens: number;
    batch: number;
    occupancy?: number;
    /** The call stopped early for partial rollouts at this share (generation). */
    partialTail?: number;
  }[];
  /** Generation's slot occupancy (engine `occupancy`), for a hold that only generates. */
  occupancy?: number;
}

/**
 * One hold as a row per stage run in it: every part but the last gets its own compute seconds;
 * the last gets the rest of the hold (its compute, onload, offload, and whatever ran after it
 * under the lock), so the rows add up to the hold and the switch is counted once.
 */
function holdRows(
  row: StageProfileReport,
  parts: NonNullable<HoldResult<unknown>['parts']>,
): StageProfileReport[] {
  const rows: StageProfileReport[] = [];
  let rest = row.seconds;
  parts.forEach((p, i) => {
    const last = i === parts.length - 1;
    const seconds = last ? rest : Math.min(rest, p.seconds);
    rest -= seconds;
    rows.push({
      ...row,
      stage: p.stage,
      seconds,
      tokens: p.tokens,
      batch: p.batch,
      onloadSeconds: last ? row.onloadSeconds : 0,
      offloadSeconds: last ? row.offloadSeconds : 0,
      computeSeconds: Math.min(p.seconds, seconds),
      occupancy: p.occupancy ?? null,
      partialTail: p.partialTail ?? null,
    });
  });
  return rows;
}

export interface StageLoopDeps {
  /** The learner: trains, evaluates, checkpoints (and generates too, in temporal mode). */
  engine: Engine;
  /** Spatial placements only: a second engine that generates on the other half of the devices. */
  generator?: Engine;
  /**
   * Makes engines on other device counts: what the reactive balancer restarts the two sides with.
   * Without it (or with `balancer: 'off'`) a spatial job keeps its split.
   */
  engines?: EngineFactory;
  balancer?: Partial<BalancerConfig> | 'off';
  locks: DeviceLockService;
  start: RunnerStart;
  /** Saves the learner's state (`engine`: the balancer may have restarted it). */
  saveCheckpoint(step: number, engine: Engine): Promise<SavedCheckpoint>;
  report(r: {
    metrics: MetricPoint[];
    profiles: StageProfileReport[];
    deviceSeconds: number;
    lockWaits?: { stage: string; seconds: number }[];
    events?: NodeJobEvent[];
  }): void;
  /** Whole bytes this job has on each of `devices` now (0 after offload): the daemon's free-memory view. */
  occupancy(devices: string[], bytes: number): void;
  checkpointed(c: SavedCheckpoint): void;
}

export type Request = 'cancel' | 'preempt' | 'drain' | null;

export class StageLoop {
  private request: Request = null;
  /** stop() has begun: the outcome is decided, and a withdrawn notice no longer changes it. */
  private stopping = false;
  private abort = new AbortController();
  /** Aborted by a cancel only: what a cancel stops at once that a preemption or a drain lets finish. */
  private cancelled = new AbortController();
  private lost: Error | null = null;
  private lastSavedStep: number;
  private readonly recentRewards: number[] = [];
  private completedStep: number;
  /** The learner and the generator now (the reactive balancer restarts them on new device sets). */
  private learner: Engine;
  private generator: Engine | undefined;
  /** The stage map after a rebalance; null: the placement's. */
  private moved: StageDevices | null = null;

  constructor(private readonly d: StageLoopDeps) {
    this.completedStep = d.start.resume?.fromOwnRun ? d.start.resume.step : 0;
    this.lastSavedStep = this.completedStep;
    this.learner = d.engine;
    this.generator = d.generator;
  }

  /** The engines the job has now, for whoever closes them. */
  engines(): { engine: Engine; generator: Engine | undefined } {
    return { engine: this.learner, generator: this.generator };
  }

  /**
   * A preemption notice withdrawn (scheduler/core/withdraw.ts): the job runs on, unless it is
   * already stopping (its checkpoint begun), was also asked to cancel or drain, or runs spatially,
   * whose pipeline the notice tore down at once. False when it stops all the same.
   */
  withdrawPreempt(): boolean {
    if (this.request !== 'preempt' || this.stopping || this.spatial) return false;
    this.request = null;
    // The aborted signal interrupted a wait for the devices at most: a new one for the waits to come.
    this.abort = new AbortController();
    return true;
  }

  /** From the daemon; the strongest request wins (cancel over preempt over drain). */
  requestStop(r: Exclude<Request, null>): void {
    const rank = { drain: 1, preempt: 2, cancel: 3 } as const;
    if (this.request === null || rank[r] > rank[this.request]) this.request = r;
    this.abort.abort();
    if (r === 'cancel') this.cancelled.abort();
  }

  private get devices(): string[] {
    const { nodeId, devices } = this.d.start.placement;
    return devices.map((i) => `${nodeId}/${i}`);
  }

  /**
   * The stage map: the placement's (decided by the scheduler, common/node-protocol/placement.ts)
   * until the reactive balancer moves a device; then the balancer's, which the control plane
   * records in the placement when it receives the `job.rebalanced` event.
   */
  private get stages(): StageDevices {
    return this.moved ?? this.d.start.placement.stages;
  }

  private get halves(): { generate: string[]; train: string[] } {
    const { nodeId } = this.d.start.placement;
    const ids = (xs: number[]) => xs.map((i) => `${nodeId}/${i}`);
    return { generate: ids(this.stages.generate), train: ids(this.stages.train) };
  }

  /**
   * Holds the job's devices for one temporal step. Returns null if a stop request came first.
   * `onload` and `offload` times go into the profile; device-seconds count the whole hold.
   *
   * With a step to save, a preemption or a drain that comes while the step waits for its turn
   * keeps the job's place in the lock's queue (a cancel still ends the wait at once), and the
   * job decides at the grant: if the request still stands, the final checkpoint is taken in this
   * very hold instead of the step (stop() then finds it saved and acquires nothing; the job stops
   * sooner than by asking again at the back of the queue, so no later within the grace period)
   * and null is returned; if the notice was withdrawn meanwhile, the step runs. With nothing to
   * save the wait ends at once, as before: stopping needs no turn then, and waiting for one could
   * outlast the grace where stopping took no time.
   */
  private async withDevices<T>(
    stage: string,
    step: number | null,
    fn: () => Promise<HoldResult<T>>,
  ): Promise<T | null> {
    if (this.completedStep <= this.lastSavedStep)
      return this.hold(this.learner, this.devices, stage, step, fn);
    let saved = null as SavedCheckpoint | null;
    const value = await this.hold(this.learner, this.devices, stage, step, fn, undefined, () => {
      if (this.request !== 'preempt' && this.request !== 'drain') return null;
      // The checkpoint begins: a notice withdrawn from here on changes nothing (withdrawPreempt).
      this.stopping = true;
      const at = this.completedStep;
      return {
        stage: 'checkpoint',
        step: at,
        fn: async () => {
          saved = await this.d.saveCheckpoint(at, this.learner);
          return { value: null };
        },
      };
    });
    if (saved) this.record(saved);
    return value;
  }

  /**
   * `engine` null: the hold moves no engine's state (`fn` manages engines itself, with the token).
   * `held` gets the hold's seconds (onload, run, offload), for the balancer's meter.
   * `atGrant`: the wait for the devices keeps its place through a preempt or a drain (only a
   * cancel aborts it); at the grant it says what runs in the hold instead of `fn` (reported as
   * its `stage` and `step`), or null for `fn`.
   */
  private async hold<T>(
    engine: Engine | null,
    devices: string[],
    stage: string,
    step: number | null,
    fn: (token: number, tokens: Readonly<Record<string, number>>) => Promise<HoldResult<T>>,
    held?: (seconds: number) => void,
    atGrant?: () => { stage: string; step: number | null; fn: () => Promise<HoldResult<null>> } | null,
  ): Promise<T | null> {
    let grant: Grant | null = null;
    const waitStart = performance.now();
    /** Since when the lock's Redis has not answered this acquire (performance.now()). */
    let unreachableSince: number | null = null;
    while (!grant) {
      const signal =
        this.request === 'cancel' ? AbortSignal.abort() : atGrant ? this.cancelled.signal : this.abort.signal;
      try {
        grant = await this.d.locks.acquire({
          devices,
          job: this.d.start.jobId,
          stage,
          holder: `${this.d.start.nodeId}:${process.pid}`,
          priority: this.d.start.priority,
          leaseMs: this.d.start.leaseMs,
          signal,
        });
      } catch (err) {
        if (this.request) return null;
        // Aborted by a notice withdrawn since: the stage waits for its devices again.
        if (signal.aborted && signal !== this.abort.signal) continue;
        // Redis out of reach (a restart, a blip): a waiting stage holds nothing, so it asks again,
        // for as long as `outagePatienceMs`; then the job stops as the platform's loss (it keeps
        // its attempt, lock-outage.ts) rather than crash. A Redis back without its data is the
        // wiped case below, or the lock's grace for holders taking their devices back.
        if (isLockOutage(err)) {
          unreachableSince ??= performance.now();
          if (performance.now() - unreachableSince >= this.outagePatienceMs)
            throw new LockOutageError(
              `the device lock's Redis was unreachable for ${Math.round(performance.now() - unreachableSince)} ms while stage ${stage} waited for its devices: ${String(err)}`,
              { cause: err },
            );
          await sleep(Math.min(1000, this.d.start.leaseMs / 4), undefined, {
            signal: this.abort.signal,
          }).catch(() => undefined);
          continue;
        }
        unreachableSince = null;
        // Dropped from the queue while this process was alive and waiting: Redis lost its record
        // (a restart, a wipe) or its heartbeats came late. Nothing was held, so it queues again
        // rather than crash the job (which cost an attempt, and failed a job on its last one). A
        // wipe also took the holder's hold, and the device looks free: waiting out a lease first
        // lets that holder find its lease lost and stop before this job can be granted the device.
        if (!(err instanceof WaiterExpiredError)) throw err;
        await sleep(this.d.start.leaseMs, undefined, { signal: this.abort.signal }).catch(() => undefined);
      }
    }
    // A renew that could not reach Redis is retried by the keeper until the lease must have lapsed
    // (local clock); a hold Redis forgot (it came back empty) is taken back under new tokens. If it
    // is lost all the same after Redis failed it during this hold (lapsed meanwhile, or someone else
    // granted the devices Redis forgot), the lock's infrastructure failed, not the job: the stage
    // stops all the same, but as an outage, which costs the job no attempt.
    let unreachable: unknown = null;
    const keeper = new LeaseKeeper(this.d.locks, grant, {
      onLost: (err) => {
        this.lost =
          unreachable !== null || err.lost.every((l) => l.reason === 'wiped')
            ? new LockOutageError(
                `stage ${stage} lost its hold on ${err.lost.map((l) => `${l.device} (${l.reason})`).join(', ')} while the device lock's Redis was unreachable or lost its data${unreachable ? `: ${String(unreachable)}` : ''}`,
                { cause: err },
              )
            : err;
      },
      onError: (err) => {
        if (isLockOutage(err)) unreachable = err;
      },
    });
    const instead = atGrant?.() ?? null;
    if (instead) {
      stage = instead.stage;
      step = instead.step;
    }
    const t0 = performance.now();
    const lockWaitSeconds = (t0 - waitStart) / 1000;
    let onloadSeconds = 0;
    let offloadSeconds = 0;
    try {
      const token = Math.max(...Object.values(grant.tokens));
      if (engine) {
        await engine.onload(token);
        onloadSeconds = (performance.now() - t0) / 1000;
        // Whole bytes: the daemon's heartbeat reports free memory per device as a byte count, and one
        // share of an arena split over devices (3, 6 or 7 of them for `tiny`) is not, which the API
        // refuses (400) for as long as the stage holds them: the node looked lost.
        this.d.occupancy(devices, Math.ceil((await engine.info()).arenaBytes / devices.length));
      }
      const out: HoldResult<T | null> = instead ? await instead.fn() : await fn(token, grant.tokens);
      if (this.lost) throw this.lost;
      const t1 = performance.now();
      await engine?.offload();
      offloadSeconds = (performance.now() - t1) / 1000;
      const seconds = (performance.now() - t0) / 1000;
      held?.(seconds);
      const row = {
        stage,
        step,
        seconds,
        tokens: out.tokens ?? out.profile?.tokens ?? 0,
        batch: out.batch ?? 0,
        devices: devices.length,
        peakBytes: out.profile?.peakArenaBytes ?? 0,
        onloadSeconds,
        offloadSeconds,
        // The engine's own measure where it keeps one; else the stage ran on the devices throughout.
        computeSeconds: out.profile ? out.profile.seconds : (t1 - t0) / 1000 - onloadSeconds,
        occupancy: out.occupancy ?? null,
        partialTail: null,
      };
      this.d.report({
        metrics: [],
        profiles: out.parts ? holdRows(row, out.parts) : [row],
        deviceSeconds: seconds * devices.length,
        lockWaits: [{ stage, seconds: lockWaitSeconds }],
      });
      return out.value;
    } finally {
      this.d.occupancy(devices, 0);
      keeper.stop();
      await this.release(keeper.grant);
    }
  }

  /**
   * How long a stage waits for the lock's Redis to answer before the job stops as an outage: two
   * leases. A longer outage would stop a hold anyway (its lease lapses after one).
   */
  private get outagePatienceMs(): number {
    return 2 * this.d.start.leaseMs;
  }

  /**
   * Releases a grant, asking again while Redis is out of reach, until its lease must have lapsed by
   * itself (the hold is over then, and the daemon ends what this process held when it exits).
   */
  private async release(grant: Grant): Promise<void> {
    const until = Date.now() + grant.leaseMs;
    for (;;) {
      try {
        await this.d.locks.release(grant);
        return;
      } catch (err) {
        if (!isLockOutage(err)) throw err;
        if (Date.now() >= until) return;
        await sleep(Math.min(1000, grant.leaseMs / 4));
      }
    }
  }

  /** Saves the last completed step if it is not saved yet (needs the devices: state is on them). */
  private async checkpointNow(step: number): Promise<void> {
    if (step <= this.lastSavedStep) return;
    const learner = this.spatial ? this.halves.train : this.devices;
    const saved = await this.hold(this.learner, learner, 'checkpoint', step, async () => ({
      value: await this.d.saveCheckpoint(step, this.learner),
    }));
    if (saved) this.record(saved);
  }

  private record(c: SavedCheckpoint): void {
    this.lastSavedStep = c.step;
    this.d.checkpointed(c);
  }

  private stopOutcome(): Outcome | 'cancelled' | null {
    if (this.request === 'cancel') return 'cancelled';
    if (this.request === 'preempt') return 'preempted';
    if (this.request === 'drain') return 'drained';
    return null;
  }

  async run(): Promise<RunEnd> {
    const w = this.d.start.spec.workflow;
    const trainDevices = this.spatial ? this.halves.train : this.devices;
    if (!this.d.start.resume && w.warmup.maxSteps > 0) {
      const ok = await this.hold(this.learner, trainDevices, 'warmup', 0, async () => {
        // A warm-up is one native call of up to maxSteps steps: a cancel stops it between two
        // (the job ends; a preempted or drained job finishes it, as its checkpoint comes after).
        const r = await this.learner.warmup(
          { maxSteps: w.warmup.maxSteps, targetAccuracy: w.warmup.targetAccuracy },
          this.cancelled.signal,
        );
        if (r.interrupted) return { value: false, profile: r.profile };
        await this.learner.resetOptimizer();
        this.d.report({
          metrics: [{ step: 0, name: 'warmup_probe_accuracy', value: r.probeAccuracy }],
          profiles: [],
          deviceSeconds: 0,
        });
        return { value: true, profile: r.profile };
      });
      if (!ok) return this.stop();
    }
    return this.spatial ? this.runSpatial() : this.runTemporal();
  }

  /** Spatial and hybrid placements run two engines; on a hybrid's shared devices the lock makes them take turns. */
  private get spatial(): boolean {
    return this.d.start.placement.mode !== 'temporal' && this.generator !== undefined;
  }

  /** Temporal: each step generates and trains in one native call while holding all the job's devices. */
  private async runTemporal(): Promise<RunEnd> {
    const w = this.d.start.spec.workflow;
    const partialTail = this.d.start.placement.partialTail ?? 0;
    for (let step = this.completedStep + 1; step <= w.steps; step++) {
      // A preempt or a drain with a step to save waits for the turn in withDevices: a notice
      // withdrawn before it comes lets the job run on.
      if (this.request === 'cancel' || (this.request && this.completedStep <= this.lastSavedStep))
        return this.stop();
      const result = await this.withDevices('rl_step', step, async () => {
        const { stats, profile, staleness, carriedGroups, occupancy } = await this.learner.rlStep({
          generate: {
            numPrompts: w.promptsPerStep,
            groupSize: w.groupSize,
            temperature: w.temperature,
            // Partial rollouts as the planner placed them: stragglers finish in the next step.
            partialTail,
            maxCarries: Math.max(1, w.maxWeightLag),
          },
          train: { algorithm: w.algorithm, lr: w.learningRate },
        });
        const seconds = profile.total.seconds;
        const value = await this.afterTrain(step, stats, [
          { step, name: 'tokens_per_second', value: seconds > 0 ? stats.tokens / seconds : 0 },
          // One call generates and trains; only tokens replayed by partial rollouts are off-policy.
          ...stalenessMetrics(step, staleness),
          ...(partialTail > 0 ? [{ step, name: 'carried_groups', value: carriedGroups }] : []),
        ]);
        const batch = w.promptsPerStep * w.groupSize;
        return {
          value,
          profile: profile.total,
          tokens: stats.tokens,
          batch,
          // The cost model fits generation and training apart, so the one hold is reported as both.
          parts: [
            {
              stage: 'generate',
              seconds: profile.generate.seconds,
              tokens: profile.generate.tokens,
              batch,
              occupancy,
              // Stopped early: the cost model keeps these calls' tail apart from whole calls'.
              ...(partialTail > 0 ? { partialTail } : {}),
            },
            { stage: 'train', seconds: profile.train.seconds, tokens: profile.train.tokens, batch },
          ],
        };
      });
      if (result === null) return this.stop();
      this.completedStep = step;
      if (result.checkpoint) this.record(result.checkpoint);
      if (result.done) return { outcome: 'succeeded', error: null, reason: result.done };
    }
    // Resumed from a checkpoint of its last step: nothing was left to run.
    return { outcome: 'succeeded', error: null, reason: 'steps_completed' };
  }

  /**
   * Spatial (PipelineRL-style): a generator engine on the generation devices and the trainer on the
   * training devices run concurrently, each under its own device lock, joined by a MicroBatchPipe.
   * Each step is generated and trained in `microBatches` micro-batches: the learner accumulates the
   * gradient of each as it arrives (holding its devices per micro-batch, so other jobs may take
   * turns within a step) and, at the step's last one, takes the optimizer step and publishes the
   * weights through shared memory; the generator applies them in flight, between decoding steps, so
   * a rollout may mix weight versions (recorded per token; `reinforce_is` corrects for the lag).
   * Generation for step n waits for the weights of step n - 1 - maxWeightLag.
   *
   * At every step boundary of a spatial placement the reactive balancer (reactive-balancer.ts)
   * may move one device between the sides: the generator pauses where it is, both engines restart
   * on the new sets under one hold of all the job's devices (rebalance-move.ts), and generation
   * resumes from the micro-batch it would have produced next.
   */
  private async runSpatial(): Promise<RunEnd> {
    const w = this.d.start.spec.workflow;
    const shm = `/ts-${this.d.start.jobId.slice(0, 8)}-${process.pid}`;
    const published = await this.hold(
      this.learner,
      this.halves.train,
      'sync',
      this.completedStep,
      async () => {
        await this.learner.publishWeights(shm);
        return { value: true };
      },
    );
    if (!published) return this.stop();
    const attached = await this.hold(
      this.generator!,
      this.halves.generate,
      'sync',
      this.completedStep,
      async () => {
        await this.generator!.attachWeights(shm);
        return { value: true };
      },
    );
    if (!attached) return this.stop();

    const planned = this.d.start.placement.microBatches;
    const microBatches = planned && w.promptsPerStep % planned === 0 ? planned : w.microBatches;
    const prompts = w.promptsPerStep / microBatches;
    const pipe = new MicroBatchPipe<Rollouts>({
      microBatches,
      maxWeightLag: w.maxWeightLag,
      publishedStep: this.completedStep,
    });
    const generating = new WorkClock();
    const closeOnStop = () => pipe.close();
    const signal = this.abort.signal;
    signal.addEventListener('abort', closeOnStop, { once: true });
    const balancer = this.balancer();
    let pausing = false;

    const nextOf = (p: { step: number; index: number }) =>
      p.index + 1 < microBatches ? { ...p, index: p.index + 1 } : { step: p.step + 1, index: 0 };
    /** Generates from `from` on; resolves with the micro-batch it would produce next (a pause). */
    const produce = async (from: { step: number; index: number }) => {
      const gen = this.generator!;
      const genDevices = this.halves.generate;
      let pos = from;
      let ended = true;
      try {
        for (; pos.step <= w.steps; pos = nextOf(pos)) {
          const waitFrom = performance.now();
          const may = await pipe.mayProduce(pos.step, () => pausing);
          balancer?.meter.generatorWaited((performance.now() - waitFrom) / 1000);
          if (pausing) {
            ended = false;
            return pos;
          }
          if (!may || this.request) return pos;
          const step = pos.step;
          const rollouts = await this.hold(
            gen,
            genDevices,
            'generate',
            step,
            async () => {
              // In-flight updates apply between decoding steps only; taking the newest weights first
              // keeps a lag-0 step's first tokens on the weights the gate waited for.
              await gen.pullWeights();
              const r = await generating.time(() =>
                gen.generate({ numPrompts: prompts, groupSize: w.groupSize, temperature: w.temperature }),
              );
              return {
                value: r,
                profile: r.profile,
                tokens: r.newTokens,
                batch: prompts * w.groupSize,
                occupancy: r.occupancy,
              };
            },
            (s) => balancer?.meter.generatorBusy(s),
          );
          if (!rollouts) return pos;
          pipe.push({ step, index: pos.index, value: rollouts });
        }
        return pos;
      } finally {
        if (ended) pipe.endOfProduction();
      }
    };
    // A generator that throws ends production: the learner, finding the pipe empty, fails the job
    // with that error. Handled from the start: a rejection nobody awaited yet killed the job
    // process before, its error lost to the crash dump, and the job was retried as crashed.
    const startProducing = (from: { step: number; index: number }) => {
      const p = produce(from);
      p.catch(() => undefined);
      return p;
    };
    let producer = startProducing({ step: this.completedStep + 1, index: 0 });

    try {
      let stepStarted = performance.now();
      for (let step = this.completedStep + 1; step <= w.steps; step++) {
        const acc = { seconds: 0, staleness: noStaleness(), inflight: 0, overlap: 0 };
        let result: { checkpoint: SavedCheckpoint | null; done: FinishReason | null } | null = null;
        for (let index = 0; index < microBatches; index++) {
          const waitFrom = performance.now();
          const mb = await pipe.take();
          balancer?.meter.learnerWaited((performance.now() - waitFrom) / 1000);
          if (!mb && !this.request) await producer;
          if (this.request || !mb) return await this.stop();
          const rollouts = mb.value;
          const last = index === microBatches - 1;
          acc.seconds += rollouts.profile.seconds;
          acc.inflight += rollouts.inflightUpdates;
          const learner = this.learner;
          result = await this.hold(
            learner,
            this.halves.train,
            'train',
            step,
            async () => {
              const t0 = performance.now();
              // The version this micro-batch is trained against (updates apply at the step's end).
              const { weightVersion } = await learner.info();
              acc.staleness = addStaleness(acc.staleness, stalenessOf(weightVersion, rollouts.versions));
              const micro = await learner.train({
                rollouts,
                algorithm: w.algorithm,
                lr: w.learningRate,
                accumulate: microBatches > 1,
              });
              const applied = microBatches > 1 && last ? await learner.applyGradients() : null;
              const stats = applied ?? micro;
              acc.seconds += micro.seconds + (applied?.seconds ?? 0);
              acc.overlap += generating.overlap(t0, performance.now());
              const measured = { profile: micro.profile, tokens: micro.tokens, batch: rollouts.batch };
              if (!last) return { value: { checkpoint: null, done: null }, ...measured };
              await learner.publishWeights(shm);
              pipe.published(step);
              const now = performance.now();
              const value = await this.afterTrain(step, stats, [
                { step, name: 'tokens_per_second', value: acc.seconds > 0 ? stats.tokens / acc.seconds : 0 },
                ...stalenessMetrics(step, acc.staleness),
                { step, name: 'inflight_updates', value: acc.inflight },
                { step, name: 'micro_batches', value: microBatches },
                { step, name: 'pipeline_overlap_seconds', value: acc.overlap / 1000 },
                { step, name: 'step_seconds', value: (now - stepStarted) / 1000 },
                { step, name: 'generate_devices', value: this.stages.generate.length },
              ]);
              stepStarted = now;
              return { value, ...measured };
            },
            (s) => balancer?.meter.learnerBusy(s),
          );
          if (result === null) return await this.stop();
        }
        this.completedStep = step;
        if (result!.checkpoint) this.record(result!.checkpoint);
        if (result!.done) return { outcome: 'succeeded', error: null, reason: result!.done };
        if (!balancer) continue;

        // The reactive balancer, at the step boundary.
        const { decision, events } = balancer.afterStep(step, this.stages, w.steps - step);
        this.d.report({
          metrics: [{ step, name: 'stage_imbalance', value: decision.imbalance }],
          profiles: [],
          deviceSeconds: 0,
          events,
        });
        if (!decision.move || this.request) continue;
        const moveStarted = performance.now();
        pausing = true;
        pipe.interrupt();
        const next = await producer;
        pausing = false;
        if (!(await this.moveDevice(balancer, decision, step, shm, moveStarted))) return await this.stop();
        stepStarted = performance.now();
        producer = startProducing(next);
      }
      return { outcome: 'succeeded', error: null, reason: 'steps_completed' };
    } finally {
      signal.removeEventListener('abort', closeOnStop);
      pipe.close();
      await producer.catch(() => undefined);
    }
  }

  /**
   * Moves one device as `decision` says, the generator already paused: both engines restarted on
   * the new sets under one hold of all the job's devices (rebalance-move.ts), then `job.rebalanced`.
   * False when a stop request came first.
   */
  private async moveDevice(
    balancer: ReactiveBalancer,
    decision: BalanceDecision,
    step: number,
    shm: string,
    started: number,
  ): Promise<boolean> {
    const from = this.stages;
    const to = movedStages(from, decision.move!);
    const { nodeId } = this.d.start.placement;
    const swapped = await this.hold(null, this.devices, 'rebalance', step, async (token, tokens) => {
      const highest = (devices: number[]) => Math.max(...devices.map((i) => tokens[`${nodeId}/${i}`]!));
      const engines = await swapEngines({
        learner: this.learner,
        generator: this.generator!,
        factory: this.d.engines!,
        tokens: { all: token, learner: highest(to.train), generator: highest(to.generate) },
        split: { generate: to.generate.length, train: to.train.length },
        shm,
      });
      this.learner = engines.learner;
      this.generator = engines.generator;
      this.moved = to;
      return { value: true };
    });
    if (!swapped) return false;
    const moveSeconds = (performance.now() - started) / 1000;
    this.d.report({
      metrics: [],
      profiles: [],
      deviceSeconds: 0,
      events: [balancer.moved(step, decision, from, to, moveSeconds)],
    });
    return true;
  }

  /** The reactive balancer of a spatial placement, or null (temporal, hybrid, off, or no engine factory). */
  private balancer(): ReactiveBalancer | null {
    const on =
      this.d.start.placement.mode === 'spatial' && this.d.engines !== undefined && this.d.balancer !== 'off';
    return on ? new ReactiveBalancer(this.d.balancer === 'off' ? {} : this.d.balancer) : null;
  }

  /**
   * Metrics, evaluation, the stopping rule and the checkpoint of a trained step; runs while the
   * trainer's devices are held (evaluation and saving need its state on them). `done` is why the
   * job ends at this step (its finish report says so), null while it goes on.
   */
  private async afterTrain(
    step: number,
    stats: StepStats,
    extra: MetricPoint[],
  ): Promise<{ checkpoint: SavedCheckpoint | null; done: FinishReason | null }> {
    const w = this.d.start.spec.workflow;
    const isLast = step === w.steps;
    const metrics: MetricPoint[] = [
      { step, name: 'reward_mean', value: stats.rewardMean },
      { step, name: 'reward_std', value: stats.rewardStd },
      { step, name: 'loss', value: stats.loss },
      { step, name: 'kl', value: stats.kl },
      { step, name: 'clip_fraction', value: stats.clipFraction },
      { step, name: 'tokens', value: stats.tokens },
      ...extra,
    ];
    let accuracy: number | null = null;
    const evaluate = async () => {
      accuracy = (await this.learner.evaluate()).accuracy;
      metrics.push({ step, name: 'eval_accuracy', value: accuracy });
      return accuracy;
    };
    if (step % w.evalEvery === 0 || isLast) await evaluate();
    this.recentRewards.push(stats.rewardMean);
    if (this.recentRewards.length > 3) this.recentRewards.shift();
    const rewardAvg = this.recentRewards.reduce((a, b) => a + b, 0) / this.recentRewards.length;
    const reachedReward =
      w.targetReward !== undefined && this.recentRewards.length === 3 && rewardAvg >= w.targetReward;
    const reachedAccuracy =
      w.targetAccuracy !== undefined && accuracy !== null && accuracy >= w.targetAccuracy;
    // A target met on the last step is still why it stopped: it would have stopped there anyway.
    const done: FinishReason | null = reachedAccuracy
      ? 'target_accuracy'
      : reachedReward
        ? 'target_reward'
        : isLast
          ? 'steps_completed'
          : null;
    if (done && accuracy === null) await evaluate();
    const checkpoint =
      done || step % w.checkpointEvery === 0 ? await this.d.saveCheckpoint(step, this.learner) : null;
    this.d.report({ metrics, profiles: [], deviceSeconds: 0 });
    return { checkpoint, done };
  }

  private async stop(): Promise<RunEnd> {
    this.stopping = true;
    const outcome = this.stopOutcome()!;
    // A step abandoned between micro-batches: its partial gradient goes; the checkpoint below is
    // of the last completed step, whose weights accumulation never touched.
    await this.learner.discardGradients();
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
