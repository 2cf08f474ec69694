/**
 * The hand-off between a spatial job's generator and learner: a bounded buffer of micro-batches
 * plus the weight-lag gate.
 *
 * The buffer holds at most `max(1, maxWeightLag) * microBatches` micro-batches, so it bounds memory
 * as the step-sized buffer did. The gate keeps `maxWeightLag` in steps: generation for step n may
 * start only once the weights of step `n - 1 - maxWeightLag` are published, so every token of step
 * n is sampled under weights at most `maxWeightLag` steps old. With lag 0 the generator waits for
 * the previous step's weights, yet within a step micro-batch i + 1 is generated while micro-batch
 * i trains: that is all the overlap an on-policy job can have.
 */
export interface MicroBatch<T> {
  step: number;
  /** 0-based position in its step; the step's update is applied after index microBatches - 1. */
  index: number;
  value: T;
}

export class MicroBatchPipe<T> {
  readonly capacity: number;
  private readonly items: MicroBatch<T>[] = [];
  private waiters: (() => void)[] = [];
  private publishedStep: number;
  private producing = true;
  private closed = false;

  constructor(private readonly o: { microBatches: number; maxWeightLag: number; publishedStep: number }) {
    if (!Number.isInteger(o.microBatches) || o.microBatches < 1) throw new Error('microBatches must be >= 1');
    this.capacity = Math.max(1, o.maxWeightLag) * o.microBatches;
    this.publishedStep = o.publishedStep;
  }

  /** Micro-batches waiting for the learner. */
  get size(): number {
    return this.items.length;
  }

  /** Whether generation for `step` may start now (buffer room and the lag gate). */
  canProduce(step: number): boolean {
    return this.items.length < this.capacity && step - 1 - this.o.maxWeightLag <= this.publishedStep;
  }

  /**
   * Resolves true once generation for `step` may start, false if the pipe was closed first or
   * `interrupted()` turned true (checked at every change and after `interrupt()`).
   */
  async mayProduce(step: number, interrupted: () => boolean = () => false): Promise<boolean> {
    while (!this.closed && !interrupted() && !this.canProduce(step)) await this.changed();
    return !this.closed && !interrupted();
  }

  /** Wakes every waiter to check its condition again (a producer asked to pause). */
  interrupt(): void {
    this.notify();
  }

  push(mb: MicroBatch<T>): void {
    this.items.push(mb);
    this.notify();
  }

  /** The next micro-batch in order; null once closed, or when production ended and nothing is left. */
  async take(): Promise<MicroBatch<T> | null> {
    while (!this.closed && this.items.length === 0 && this.producing) await this.changed();
    if (this.closed || this.items.length === 0) return null;
    const mb = this.items.shift()!;
    this.notify();
    return mb;
  }

  /** The learner published the weights of `step`: opens the gate for later steps. */
  published(step: number): void {
    this.publishedStep = Math.max(this.publishedStep, step);
    this.notify();
  }

  /** The generator will push nothing more. */
  endOfProduction(): void {
    this.producing = false;
    this.notify();
  }

  /** Stops both sides: waiters resolve at once (a stop request, or the learner finished). */
  close(): void {
    this.closed = true;
    this.notify();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
}
