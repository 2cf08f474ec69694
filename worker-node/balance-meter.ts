/**
 * What the reactive balancer measures in a spatial run (balancer.ts): per step, each side's busy
 * seconds (its holds) and wait seconds (the generator blocked on a full pipe or the weight-lag
 * gate, the learner starved for a micro-batch), and the step's wall time. The window is the last
 * `windowSteps` whole steps; the first step after a start or a move is not counted (the pipe fills).
 */
import type { BalanceWindow } from './balancer.js';

interface StepRecord {
  wall: number;
  genBusy: number;
  genWait: number;
  trainBusy: number;
  trainWait: number;
}

const empty = (): StepRecord => ({ wall: 0, genBusy: 0, genWait: 0, trainBusy: 0, trainWait: 0 });

export class BalanceMeter {
  private open = empty();
  private openedAt = performance.now();
  private closed: StepRecord[] = [];
  private skipNext = true;

  constructor(private readonly windowSteps: number) {}

  generatorBusy(seconds: number): void {
    this.open.genBusy += seconds;
  }
  generatorWaited(seconds: number): void {
    this.open.genWait += seconds;
  }
  learnerBusy(seconds: number): void {
    this.open.trainBusy += seconds;
  }
  learnerWaited(seconds: number): void {
    this.open.trainWait += seconds;
  }

  /** A step completed on the learner's side. */
  closeStep(): void {
    const now = performance.now();
    const rec = { ...this.open, wall: (now - this.openedAt) / 1000 };
    this.open = empty();
    this.openedAt = now;
    if (this.skipNext) {
      this.skipNext = false;
      return;
    }
    this.closed.push(rec);
    if (this.closed.length > this.windowSteps) this.closed.shift();
  }

  /** Starts again (after a move): the next step refills the pipe and is not counted. */
  reset(): void {
    this.open = empty();
    this.openedAt = performance.now();
    this.closed = [];
    this.skipNext = true;
  }

  window(devices: { generate: number; train: number }): BalanceWindow {
    const sum = this.closed.reduce(
      (a, r) => ({
        wall: a.wall + r.wall,
        genBusy: a.genBusy + r.genBusy,
        genWait: a.genWait + r.genWait,
        trainBusy: a.trainBusy + r.trainBusy,
        trainWait: a.trainWait + r.trainWait,
      }),
      empty(),
    );
    return {
      steps: this.closed.length,
      wallSeconds: sum.wall,
      generate: { devices: devices.generate, busySeconds: sum.genBusy, waitSeconds: sum.genWait },
      train: { devices: devices.train, busySeconds: sum.trainBusy, waitSeconds: sum.trainWait },
    };
  }
}
