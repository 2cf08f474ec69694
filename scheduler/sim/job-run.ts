/**
 * One job's life in the simulation: queued, placed, stepping through its phases under the device
 * lock, checkpointing, preempted (a checkpoint at notice; if it outlasts the grace period the job is
 * taken back and loses its steps since the last periodic checkpoint), requeued, resumed, finished.
 * Every callback it schedules carries the run's token, so a preemption cancels what was in flight.
 */
import type { Clock } from './events.js';
import type { DeviceLocks } from './devices.js';
import type { Rng } from './rng.js';
import type { ProfileSummary } from '../core/types.js';
import { drawStep, meanTailFactor, type Phase } from './step.js';
import { stepFigures, type SimJobSpec, type SimPhysics } from './model.js';

export type DeviceTimeKind = 'useful' | 'switch' | 'checkpoint';

export interface JobHooks {
  finished(job: JobRun): void;
  /** The checkpoint at notice is written: the devices are free and the job goes back to the queue. */
  checkpointedAfterNotice(job: JobRun): void;
  deviceTime(kind: DeviceTimeKind, deviceSeconds: number): void;
}

export class JobRun {
  status: 'pending' | 'queued' | 'running' | 'done' = 'pending';
  stepsDone = 0;
  lastCheckpoint = 0;
  attempts = 0;
  queueSeq = 0;
  queuedAt = 0;
  requeueReason: 'preempted' | null = null;
  nodeId = '';
  devices: number[] = [];
  placedAt = 0;
  notice: number | null = null;
  firstPlacedAt: number | null = null;
  finishedAt: number | null = null;
  queuedSeconds = 0;
  stepsLost = 0;
  /** Each preemption notice: when the run it ended had been placed, and when the notice came. */
  readonly preemptions: { placedAt: number; at: number }[] = [];
  readonly checkpointSeconds: number;
  private readonly pair: { generate: number; train: number };
  private readonly tail: number;
  private token = 0;
  private phases: Phase[] = [];
  private phase = 0;
  private holding = false;
  private holdFrom = 0;
  private sums = { step: 0, held: 0, switches: 0, n: 0 };

  constructor(
    readonly spec: SimJobSpec,
    private readonly rng: Rng,
    private readonly clock: Clock,
    private readonly locks: DeviceLocks,
    physics: SimPhysics,
    private readonly hooks: JobHooks,
  ) {
    this.checkpointSeconds = spec.stateBytesPerDevice / physics.checkpointBytesPerSecond;
    const bw = physics.switchBytesPerSecond;
    this.pair = {
      generate: (2 * spec.generateBytesPerDevice) / bw,
      train: (2 * spec.stateBytesPerDevice) / bw,
    };
    this.tail = meanTailFactor(spec.shape.tailSigma, rng);
  }

  /**
   * What the worker would report: step time without waits for the lock, held time, and one onload
   * and offload per hold (the switch the job pays per step once it shares its devices: the weights
   * for a generation hold, the training state for a training hold).
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
    };
  }

  /** The profile an earlier run of the same workload measured: the shape's means, five samples. */
  private earlierRunProfile(): ProfileSummary {
    const f = stepFigures(this.spec.shape);
    const sh = this.spec.shape;
    const generateHolds = sh.envSeconds > 0 ? sh.turns : 1;
    const switchSeconds = generateHolds * this.pair.generate + this.pair.train;
    return {
      stepSeconds: f.step,
      busySeconds: f.held + switchSeconds,
      switchSeconds,
      peakBytes: this.spec.deviceBytes,
      samples: 5,
    };
  }

  enqueue(now: number, seq: number): void {
    this.status = 'queued';
    this.queuedAt = now;
    this.queueSeq = seq;
  }

  /** Placed now; its first step begins after `delay` (the round's decision cost). */
  start(nodeId: string, devices: number[], delay: number): void {
    const now = this.clock.now;
    this.status = 'running';
    this.nodeId = nodeId;
    this.devices = devices;
    this.placedAt = now;
    this.notice = null;
    this.attempts++;
    this.queuedSeconds += now - this.queuedAt;
    this.firstPlacedAt ??= now;
    this.token++;
    this.newStep();
    this.later(delay, () => this.advance());
  }

  private newStep(): void {
    const due =
      (this.stepsDone + 1) % this.spec.checkpointEvery === 0 && this.stepsDone + 1 < this.spec.steps;
    this.phases = drawStep(this.spec.shape, this.rng, this.tail, due ? this.checkpointSeconds : null);
    this.phase = 0;
  }

  private later(seconds: number, fn: () => void): void {
    const token = this.token;
    this.clock.at(this.clock.now + seconds, () => {
      if (token === this.token) fn();
    });
  }

  private advance(): void {
    const p = this.phases[this.phase];
    if (!p) return this.stepDone();
    if (!p.held) return this.later(p.seconds, () => this.next());
    const token = this.token;
    const { nodeId, devices } = this;
    this.locks.request({
      jobId: this.spec.id,
      nodeId,
      devices,
      bytesPerDevice:
        p.kind === 'generate' ? this.spec.generateBytesPerDevice : this.spec.stateBytesPerDevice,
      grant: (switchSeconds) => {
        if (token !== this.token) return this.locks.release(this.spec.id, nodeId, devices);
        this.holding = true;
        this.hooks.deviceTime('switch', switchSeconds * this.devices.length);
        this.holdFrom = this.clock.now + switchSeconds;
        this.later(switchSeconds + p.seconds, () => {
          this.endHold(p.kind === 'checkpoint' ? 'checkpoint' : 'useful');
          this.next();
        });
      },
    });
  }

  private endHold(kind: DeviceTimeKind): void {
    if (!this.holding) return;
    this.hooks.deviceTime(kind, Math.max(0, this.clock.now - this.holdFrom) * this.devices.length);
    this.holding = false;
    this.locks.release(this.spec.id, this.nodeId, this.devices);
  }

  private next(): void {
    this.phase++;
    this.advance();
  }

  private stepDone(): void {
    this.stepsDone++;
    const s = this.sums;
    for (const p of this.phases) {
      if (p.kind === 'checkpoint') continue;
      s.step += p.seconds;
      if (p.held) {
        s.held += p.seconds;
        s.switches += p.kind === 'generate' ? this.pair.generate : this.pair.train;
      }
    }
    s.n++;
    if (this.phases.some((p) => p.kind === 'checkpoint')) this.lastCheckpoint = this.stepsDone;
    if (this.stepsDone >= this.spec.steps) {
      this.leave();
      this.status = 'done';
      this.finishedAt = this.clock.now;
      return this.hooks.finished(this);
    }
    this.newStep();
    this.advance();
  }

  /** A preemption notice: stop the step, write a checkpoint, and leave if it is done within the grace. */
  notify(graceSeconds: number): void {
    const now = this.clock.now;
    this.notice = now;
    this.preemptions.push({ placedAt: this.placedAt, at: now });
    this.token++;
    if (this.holding) {
      this.hooks.deviceTime('useful', Math.max(0, now - this.holdFrom) * this.devices.length);
      this.holdFrom = now;
    } else this.locks.cancel(this.spec.id, this.nodeId);
    if (this.checkpointSeconds <= graceSeconds)
      this.later(this.checkpointSeconds, () => {
        this.lastCheckpoint = this.stepsDone;
        this.leave();
        this.hooks.checkpointedAfterNotice(this);
      });
  }

  /** The grace ran out before the checkpoint was written: back to the last periodic checkpoint. */
  takeBack(): void {
    this.stepsLost += this.stepsDone - this.lastCheckpoint;
    this.stepsDone = this.lastCheckpoint;
    this.leave();
  }

  private leave(): void {
    this.endHold('checkpoint');
    this.locks.evict(this.spec.id, this.nodeId, this.devices);
    this.token++;
    this.devices = [];
  }
}
