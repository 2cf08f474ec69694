/**
 * One job's life in the simulation: queued, placed, stepping under the device lock in the plan it
 * was placed with, checkpointing, preempted (a checkpoint at notice; if it outlasts the grace period
 * the job is taken back and loses its steps since the last periodic checkpoint), requeued, resumed,
 * finished. Every callback it schedules carries the run's token, so a preemption cancels what was
 * in flight.
 *
 * A temporal plan runs a step as one sequence of phases on all the job's devices (step.ts). A
 * spatial or hybrid plan runs two loops: the generator on its devices and the trainer on its own
 * (a hybrid's shared devices taken in turns under the lock). The generator may start a step's batch
 * once training is within the job's weight lag of it; with a lag it streams (the slots its
 * stragglers free are refilled by the next batch, so it spends the turn's bulk, and the batch is
 * ready when its tail ends), without one it waits out each turn's tail and the trainer has already
 * trained all but the last of the plan's micro-batches while generation went on.
 */
import type { Clock } from './events.js';
import { movesElsewhere } from '../core/preempt.js';
import type { DeviceLocks } from './devices.js';
import type { Rng } from './rng.js';
import type { NodeDevices, PreemptDecision, ProfileSummary } from '../core/types.js';
import type { ReplanInput } from '../planner/replan.js';
import type { PlacementMode } from '../../common/node-protocol/placement.js';
import type { StageSample } from '../planner/cost-model.js';
import { drawStep, drawTurn, turnOn, turnStats, type Phase } from './step.js';
import { stepFigures, type SimJobSpec, type SimPhysics } from './model.js';

export type DeviceTimeKind = 'useful' | 'switch' | 'checkpoint';

export interface JobHooks {
  finished(job: JobRun): void;
  /** The checkpoint at notice is written: the devices are free and the job goes back to the queue. */
  checkpointedAfterNotice(job: JobRun): void;
  deviceTime(kind: DeviceTimeKind, deviceSeconds: number): void;
  /** Steps done (positive) or lost to a take-back (negative). */
  progressed(job: JobRun, steps: number): void;
}

/** How the placement runs the job: its mode and the devices of each stage (node device indices). */
export interface RunPlan {
  mode: PlacementMode;
  generate: number[];
  train: number[];
  microBatches: number;
  /** Partial rollouts of a temporal plan (share of groups carried; 0: off). */
  partialTail?: number;
}

/** Sequences a step's batch holds, as the planner is told (64 prompts × 8 samples). */
export const STEP_SEQUENCES = 512;

type Side = 'generate' | 'train';

interface StageSums {
  seconds: number;
  bulk: number;
  calls: number;
}

export class JobRun {
  status: 'pending' | 'queued' | 'running' | 'done' = 'pending';
  stepsDone = 0;
  lastCheckpoint = 0;
  attempts = 0;
  queueSeq = 0;
  queuedAt = 0;
  requeueReason: 'preempted' | 'node_lost' | null = null;
  /** Its node died: it does nothing more until the node is found lost (or its notice runs out). */
  crashed = false;
  nodeId = '';
  devices: number[] = [];
  plan: RunPlan | null = null;
  /** Partial rollouts of the temporal plan it runs (0: off). */
  partialTail = 0;
  placedAt = 0;
  /** When this run's first step began (placement plus the round's decision cost): its minimum run time counts from here. */
  runStartedAt = 0;
  notice: number | null = null;
  firstPlacedAt: number | null = null;
  finishedAt: number | null = null;
  queuedSeconds = 0;
  stepsLost = 0;
  /** Each preemption notice: when the run it ended had started, and when the notice came. */
  readonly preemptions: { runStartedAt: number; at: number }[] = [];
  readonly checkpointSeconds: number;
  private readonly switchBandwidth: number;
  private readonly meanUnits: number;
  /** Mean bulk / sync of a turn for this job's tail (what an earlier run of it measured). */
  private readonly occupancy: number;
  private token = 0;
  private phases: Phase[] = [];
  private phase = 0;
  /** Holds in progress, by side (a temporal hold is `generate`), with their devices. */
  private readonly holds = new Map<Side, { from: number; devices: number[] }>();
  private sums = { step: 0, held: 0, switches: 0, n: 0 };
  /**
   * Per stage, device count and whether the calls stopped early for partial rollouts, as the
   * worker's profiles are grouped (a moved job has several).
   */
  private stageSums: Record<Side, Map<string, StageSums & { devices: number; partial: boolean }>> = {
    generate: new Map(),
    train: new Map(),
  };
  /** Why the notice out now was sent; where a job moving to a new plan in place comes back to. */
  noticeReason: PreemptDecision['reason'] | null = null;
  /** The queued job the notice frees this job's devices for. */
  noticeFor: string | null = null;
  returnTo: NodeDevices | null = null;
  /** The latest re-planning decision about this job, as production reads it from its events. */
  lastReplan: ReplanInput['last'] = null;
  private placedSteps = 0;
  private placedWall = 0;
  private lastStepAt = 0;
  // Pipelined plans: batches generated in this placement, batches ready for training, trainer state.
  private generated = 0;
  private ready = 0;
  private training = false;
  private generating = false;
  private preTrainDue = 0;

  constructor(
    readonly spec: SimJobSpec,
    private readonly rng: Rng,
    private readonly clock: Clock,
    private readonly locks: DeviceLocks,
    physics: SimPhysics,
    private readonly hooks: JobHooks,
  ) {
    this.checkpointSeconds = spec.stateBytesPerDevice / physics.checkpointBytesPerSecond;
    this.switchBandwidth = physics.switchBytesPerSecond;
    // The mean from 200 turns, the occupancy an earlier run measured from 100 more (the workloads'
    // figures in docs/simulator.md are drawn in this order).
    this.meanUnits = turnStats(spec.shape.tailSigma, rng).meanUnits;
    this.occupancy = turnStats(spec.shape.tailSigma, rng, 100).occupancy;
  }

  get lag(): number {
    return this.spec.maxWeightLag ?? 0;
  }

  /** Onload + offload of one hold of a side on `n` devices (the job's state sharded over them). */
  private pairSeconds(side: Side, n: number): number {
    const perDevice = side === 'generate' ? this.spec.generateBytesPerDevice : this.spec.stateBytesPerDevice;
    return (2 * perDevice * this.spec.devices) / Math.max(1, n) / this.switchBandwidth;
  }

  private bytesPerDevice(side: Side | 'checkpoint', n: number): number {
    const perDevice = side === 'generate' ? this.spec.generateBytesPerDevice : this.spec.stateBytesPerDevice;
    return (perDevice * this.spec.devices) / Math.max(1, n);
  }

  /**
   * What the worker would report: step time without waits for the lock, held time per device, one
   * onload and offload per hold (the switch it pays per step once it shares its devices), and per
   * stage the mean call on the devices it ran on with its slot occupancy.
   */
  profile(): ProfileSummary | null {
    const s = this.sums;
    if (s.n === 0) return this.spec.recurring ? this.earlierRunProfile() : null;
    const switchSeconds = s.switches / s.n;
    return {
      stepSeconds: s.step / s.n,
      busySeconds: s.held / s.n + switchSeconds,
      switchSeconds,
      peakBytes: this.spec.deviceBytes,
      samples: s.n,
      stages: this.stageSamples(),
    };
  }

  /** Steps and mean wall seconds per step in the current placement (null before two steps). */
  sincePlaced(): ReplanInput['sincePlaced'] {
    return this.placedSteps >= 2
      ? { steps: this.placedSteps, stepSeconds: this.placedWall / this.placedSteps }
      : null;
  }

  private stageSamples(): StageSample[] {
    const out: StageSample[] = [];
    for (const side of ['generate', 'train'] as const)
      for (const st of this.stageSums[side].values()) {
        out.push({
          stage: side,
          batch: STEP_SEQUENCES,
          devices: st.devices,
          computeSeconds: st.seconds / st.calls,
          switchSeconds: this.pairSeconds(side, st.devices),
          count: st.calls,
          ...(side === 'generate' ? { occupancy: st.bulk / Math.max(1e-9, st.seconds) } : {}),
          ...(st.partial ? { partial: true } : {}),
        });
      }
    return out;
  }

  /** The profile an earlier run of the same workload measured (temporal, on its own devices): five samples. */
  private earlierRunProfile(): ProfileSummary {
    const f = stepFigures(this.spec.shape);
    const sh = this.spec.shape;
    const d = this.spec.devices;
    const generateHolds = sh.envSeconds > 0 ? sh.turns : 1;
    const switchSeconds = generateHolds * this.pairSeconds('generate', d) + this.pairSeconds('train', d);
    const generateSeconds = sh.turns * sh.generateSeconds;
    return {
      stepSeconds: f.step,
      busySeconds: f.held + switchSeconds,
      switchSeconds,
      peakBytes: this.spec.deviceBytes,
      samples: 5,
      stages: [
        {
          stage: 'generate',
          batch: STEP_SEQUENCES,
          devices: d,
          computeSeconds: generateSeconds,
          switchSeconds: this.pairSeconds('generate', d),
          count: 5,
          occupancy: this.occupancy,
        },
        {
          stage: 'train',
          batch: STEP_SEQUENCES,
          devices: d,
          computeSeconds: sh.trainSeconds + sh.syncSeconds,
          switchSeconds: this.pairSeconds('train', d),
          count: 5,
        },
      ],
    };
  }

  enqueue(now: number, seq: number): void {
    this.status = 'queued';
    this.queuedAt = now;
    this.queueSeq = seq;
  }

  /** Placed now; its first step begins after `delay` (the round's decision cost). */
  start(nodeId: string, devices: number[], delay: number, plan?: RunPlan): void {
    const now = this.clock.now;
    this.status = 'running';
    this.nodeId = nodeId;
    this.devices = devices;
    this.plan = plan && plan.mode !== 'temporal' ? plan : null;
    this.partialTail = plan && plan.mode === 'temporal' ? (plan.partialTail ?? 0) : 0;
    this.placedAt = now;
    this.notice = null;
    this.noticeReason = null;
    this.noticeFor = null;
    this.returnTo = null;
    this.placedSteps = 0;
    this.placedWall = 0;
    this.attempts++;
    this.queuedSeconds += now - this.queuedAt;
    this.firstPlacedAt ??= now;
    this.token++;
    this.lastStepAt = now + delay;
    this.runStartedAt = now + delay;
    if (this.plan) {
      this.generated = this.stepsDone;
      this.ready = this.stepsDone;
      this.training = false;
      this.generating = false;
      this.preTrainDue = 0;
      this.later(delay, () => this.pump());
      return;
    }
    this.newStep();
    this.later(delay, () => this.advance());
  }

  private later(seconds: number, fn: () => void): void {
    const token = this.token;
    this.clock.at(this.clock.now + seconds, () => {
      if (token === this.token) fn();
    });
  }

  private checkpointDue(): boolean {
    return (this.stepsDone + 1) % this.spec.checkpointEvery === 0 && this.stepsDone + 1 < this.spec.steps;
  }

  /** Holds `devices` for `seconds` of `kind` work (after the switch the lock charges), then `done`. */
  private hold(
    side: Side,
    devices: number[],
    seconds: number,
    kind: DeviceTimeKind,
    bytes: number,
    done: () => void,
  ): void {
    const token = this.token;
    this.locks.request({
      jobId: this.spec.id,
      nodeId: this.nodeId,
      devices,
      bytesPerDevice: bytes,
      grant: (switchSeconds) => {
        if (token !== this.token) return this.locks.release(this.spec.id, this.nodeId, devices);
        this.hooks.deviceTime('switch', switchSeconds * devices.length);
        this.holds.set(side, { from: this.clock.now + switchSeconds, devices });
        this.later(switchSeconds + seconds, () => {
          this.endHold(side, kind);
          done();
        });
      },
    });
  }

  private endHold(side: Side, kind: DeviceTimeKind): void {
    const h = this.holds.get(side);
    if (!h) return;
    this.hooks.deviceTime(kind, Math.max(0, this.clock.now - h.from) * h.devices.length);
    this.holds.delete(side);
    this.locks.release(this.spec.id, this.nodeId, h.devices);
  }

  // ---- Temporal: one sequence of phases per step on all the devices.

  private newStep(): void {
    const n = this.devices.length;
    const { phases, turns } = drawStep(
      this.spec.shape,
      this.rng,
      this.meanUnits,
      this.spec.devices,
      n,
      this.partialTail,
    );
    if (this.checkpointDue())
      phases.push({ kind: 'checkpoint', held: true, seconds: this.checkpointSeconds });
    const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
    // Calls that stopped with groups left to carry are reported as such, as the worker marks them
    // (`partialTail`): the cost model keeps their tail apart from whole calls'.
    this.recordStage(
      'generate',
      n,
      sum(turns.map((t) => t.sync)),
      sum(turns.map((t) => t.bulk)),
      this.partialTail > 0,
    );
    const train = sum(phases.filter((p) => p.kind === 'train').map((p) => p.seconds));
    this.recordStage('train', n, train, train);
    this.phases = phases;
    this.phase = 0;
  }

  private pendingStage: { side: Side; devices: number; seconds: number; bulk: number; partial: boolean }[] =
    [];

  /** Stage figures count once the step they belong to is done (a preempted step reports nothing). */
  private recordStage(side: Side, devices: number, seconds: number, bulk: number, partial = false): void {
    this.pendingStage.push({ side, devices, seconds, bulk, partial });
  }

  private commitStages(): void {
    for (const p of this.pendingStage) {
      const sums = this.stageSums[p.side];
      const key = `${p.devices}/${p.partial}`;
      let st = sums.get(key);
      if (!st)
        sums.set(key, (st = { seconds: 0, bulk: 0, calls: 0, devices: p.devices, partial: p.partial }));
      st.seconds += p.seconds;
      st.bulk += p.bulk;
      st.calls++;
    }
    this.pendingStage = [];
  }

  private advance(): void {
    const p = this.phases[this.phase];
    if (!p) return this.temporalStepDone();
    if (!p.held) return this.later(p.seconds, () => this.next());
    const n = this.devices.length;
    const side: Side = p.kind === 'generate' ? 'generate' : 'train';
    this.hold(
      side,
      this.devices,
      p.seconds,
      p.kind === 'checkpoint' ? 'checkpoint' : 'useful',
      this.bytesPerDevice(side, n),
      () => this.next(),
    );
  }

  private next(): void {
    this.phase++;
    this.advance();
  }

  private temporalStepDone(): void {
    const n = this.devices.length;
    let held = 0;
    let switches = 0;
    for (const p of this.phases) {
      if (p.kind === 'checkpoint' || !p.held) continue;
      held += p.seconds;
      switches += this.pairSeconds(p.kind === 'generate' ? 'generate' : 'train', n);
    }
    const wall = this.phases.filter((p) => p.kind !== 'checkpoint').reduce((a, p) => a + p.seconds, 0);
    this.stepDone(
      wall,
      held,
      switches,
      this.phases.some((p) => p.kind === 'checkpoint'),
    );
    if (this.status !== 'running') return;
    this.newStep();
    this.advance();
  }

  private stepDone(wall: number, heldPerDevice: number, switches: number, checkpointed: boolean): void {
    this.stepsDone++;
    this.hooks.progressed(this, 1);
    const s = this.sums;
    s.step += wall;
    s.held += heldPerDevice;
    s.switches += switches;
    s.n++;
    this.placedSteps++;
    this.placedWall += wall;
    this.commitStages();
    if (checkpointed) this.lastCheckpoint = this.stepsDone;
    if (this.stepsDone >= this.spec.steps) {
      this.leave();
      this.status = 'done';
      this.finishedAt = this.clock.now;
      this.hooks.finished(this);
    }
  }

  // ---- Spatial and hybrid: a generator loop and a trainer loop.

  /** Starts whatever can start: the next batch's generation (within the lag) and the next training. */
  private pump(): void {
    const plan = this.plan!;
    if (!this.generating && this.generated < this.spec.steps && this.generated <= this.stepsDone + this.lag) {
      this.generating = true;
      this.generateBatch(plan, 0, this.generated, { sync: 0, bulk: 0 });
    }
    if (!this.training && this.preTrainDue > 0) {
      const seconds = this.preTrainDue;
      this.preTrainDue = 0;
      this.training = true;
      this.hold(
        'train',
        plan.train,
        seconds,
        'useful',
        this.bytesPerDevice('train', plan.train.length),
        () => {
          this.training = false;
          this.pump();
        },
      );
    } else if (!this.training && this.ready > this.stepsDone) this.trainBatch(plan);
  }

  private trainSeconds(plan: RunPlan): number {
    const sh = this.spec.shape;
    return ((sh.trainSeconds + sh.syncSeconds) * this.spec.devices) / plan.train.length;
  }

  /** Off-device seconds per step (environment and rewards): what the profile's gap reports. */
  private offDeviceSeconds(): number {
    const sh = this.spec.shape;
    return sh.turns * sh.envSeconds + sh.rewardSeconds;
  }

  private generateBatch(
    plan: RunPlan,
    turn: number,
    batch: number,
    acc: { sync: number; bulk: number },
  ): void {
    const sh = this.spec.shape;
    if (turn === 0 && this.lag === 0 && plan.microBatches > 1)
      // On-policy, pipelined within the step: the trainer takes all but the last micro-batch as they come.
      this.preTrainDue += (this.trainSeconds(plan) * (plan.microBatches - 1)) / plan.microBatches;
    const t = turnOn(drawTurn(sh, this.rng, this.meanUnits), this.spec.devices, plan.generate.length);
    const seconds = this.lag > 0 ? t.bulk : t.sync;
    const tail = t.sync - seconds;
    acc.sync += t.sync;
    acc.bulk += t.bulk;
    this.hold(
      'generate',
      plan.generate,
      seconds,
      'useful',
      this.bytesPerDevice('generate', plan.generate.length),
      () => {
        if (turn + 1 < sh.turns) {
          this.later(tail + sh.envSeconds, () => this.generateBatch(plan, turn + 1, batch, acc));
          return;
        }
        this.recordStage('generate', plan.generate.length, acc.sync, acc.bulk);
        this.generated = batch + 1;
        this.generating = false;
        // The batch's stragglers end after the generator moved on; rewards are scored off the devices.
        this.later(tail + sh.envSeconds + sh.rewardSeconds, () => {
          this.ready = Math.max(this.ready, batch + 1);
          this.pump();
        });
        this.pump();
      },
    );
    if (turn === 0 && this.preTrainDue > 0) this.pump();
  }

  private trainBatch(plan: RunPlan): void {
    this.training = true;
    const full = this.trainSeconds(plan);
    const seconds = this.lag === 0 && plan.microBatches > 1 ? full / plan.microBatches : full;
    const checkpoint = this.checkpointDue();
    const bytes = this.bytesPerDevice('train', plan.train.length);
    this.recordStage('train', plan.train.length, full, full);
    this.hold('train', plan.train, seconds, 'useful', bytes, () => {
      const finish = () => {
        const wall = this.clock.now - this.lastStepAt;
        this.lastStepAt = this.clock.now;
        const g = plan.generate.length;
        const tr = plan.train.length;
        const union = new Set([...plan.generate, ...plan.train]).size;
        const generateHolds = this.spec.shape.turns;
        const switches =
          (this.pairSeconds('generate', g) * g * generateHolds + this.pairSeconds('train', tr) * tr) / union;
        this.training = false;
        this.stepDone(wall, Math.max(0, wall - this.offDeviceSeconds()), switches, checkpoint);
        if (this.status === 'running') this.pump();
      };
      if (!checkpoint) return finish();
      this.hold('train', plan.train, this.checkpointSeconds, 'checkpoint', bytes, finish);
    });
  }

  /** A preemption notice: stop the step, write a checkpoint, and leave if it is done within the grace. */
  notify(
    graceSeconds: number,
    reason: PreemptDecision['reason'] = 'priority',
    moveTo?: NodeDevices,
    forJobId?: string,
  ): void {
    const now = this.clock.now;
    this.notice = now;
    this.noticeReason = reason;
    this.noticeFor = forJobId ?? null;
    this.preemptions.push({ runStartedAt: this.runStartedAt, at: now });
    // A dead node writes no checkpoint: the job waits for its take-back or for the node to be lost.
    if (this.crashed) return;
    // A move to a new plan keeps its devices, a move elsewhere gets those chosen for it: the
    // round gives them to it first.
    this.returnTo =
      reason === 'replan'
        ? { nodeId: this.nodeId, devices: [...this.devices] }
        : movesElsewhere(reason) && moveTo
          ? { nodeId: moveTo.nodeId, devices: [...moveTo.devices] }
          : null;
    this.token++;
    this.pendingStage = [];
    for (const [side, h] of this.holds) {
      this.hooks.deviceTime('useful', Math.max(0, now - h.from) * h.devices.length);
      this.holds.set(side, { from: now, devices: h.devices });
    }
    this.locks.cancel(this.spec.id, this.nodeId);
    if (this.checkpointSeconds <= graceSeconds)
      this.later(this.checkpointSeconds, () => {
        this.lastCheckpoint = this.stepsDone;
        this.leave();
        this.hooks.checkpointedAfterNotice(this);
      });
  }

  /**
   * Its notice was withdrawn (scheduler/core/withdraw.ts). A simulated job begins its checkpoint at
   * the notice, so the withdrawal always comes too late here: the notice goes, as the job's row
   * loses it in production, and the job still leaves once the checkpoint is written, as one whose
   * worker had already stopped does (requeued with no notice behind it: nobody claims it).
   */
  noticeWithdrawn(): void {
    this.notice = null;
    this.noticeReason = null;
    this.noticeFor = null;
    this.returnTo = null;
  }

  /** Its node died: every activity stops where it is (the steps since the last checkpoint are lost). */
  crash(): void {
    this.crashed = true;
    this.token++;
    this.pendingStage = [];
    // The node's memory is gone with it: nothing stays resident, and no request waits there.
    this.locks.evict(this.spec.id, this.nodeId, this.devices);
    for (const side of [...this.holds.keys()]) this.endHold(side, 'useful');
  }

  /** Its node is found lost: back to the last periodic checkpoint, as a take-back. */
  nodeLost(): void {
    this.takeBack();
  }

  /** The grace ran out before the checkpoint was written: back to the last periodic checkpoint. */
  takeBack(): void {
    this.crashed = false;
    this.stepsLost += this.stepsDone - this.lastCheckpoint;
    this.hooks.progressed(this, this.lastCheckpoint - this.stepsDone);
    this.stepsDone = this.lastCheckpoint;
    this.leave();
  }

  private leave(): void {
    for (const side of [...this.holds.keys()]) this.endHold(side, 'checkpoint');
    this.locks.evict(this.spec.id, this.nodeId, this.devices);
    this.token++;
    this.pendingStage = [];
    this.devices = [];
  }
}
