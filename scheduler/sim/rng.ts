/**
 * A seeded random source (mulberry32) so that every workload and every run is reproducible from
 * its seed; Math.random is never used by the simulator.
 */
export class Rng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }

  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  int(lo: number, hi: number): number {
    return Math.floor(this.uniform(lo, hi + 1));
  }

  normal(): number {
    const u = Math.max(1e-12, this.next());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /** Lognormal with the given median and log-space sigma (completion lengths, durations). */
  lognormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  exponential(mean: number): number {
    return -mean * Math.log(Math.max(1e-12, 1 - this.next()));
  }

  pick<T>(items: readonly { value: T; weight: number }[]): T {
    const total = items.reduce((s, i) => s + i.weight, 0);
    let r = this.next() * total;
    for (const i of items) if ((r -= i.weight) <= 0) return i.value;
    return items[items.length - 1]!.value;
  }

  /** An independent stream for one job, so a job's steps do not depend on event order. */
  fork(salt: number): Rng {
    return new Rng(Math.imul(this.s ^ salt, 0x85ebca6b) ^ (salt * 0x9e3779b1));
  }
}
