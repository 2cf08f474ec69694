/**
 * Intervals during which one side of a pipeline was busy, to measure how much of the other side's
 * work overlapped it (the spatial pipeline's `pipeline_overlap_seconds`). Times are
 * performance.now() milliseconds; only recent intervals are kept.
 */
export class WorkClock {
  private readonly done: [number, number][] = [];
  private running: number | null = null;

  async time<T>(fn: () => Promise<T>): Promise<T> {
    this.running = performance.now();
    try {
      return await fn();
    } finally {
      this.done.push([this.running, performance.now()]);
      this.running = null;
      if (this.done.length > 256) this.done.shift();
    }
  }

  /** Milliseconds of [from, to] during which this side was busy (work still running counts up to `to`). */
  overlap(from: number, to: number): number {
    const spans = this.running === null ? this.done : [...this.done, [this.running, to] as [number, number]];
    let ms = 0;
    for (const [a, b] of spans) ms += Math.max(0, Math.min(b, to) - Math.max(a, from));
    return ms;
  }
}
