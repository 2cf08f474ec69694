/**
 * Seeded draws. One stream, drawn in a fixed order (the jobs, then the fault plan, then the
 * faults' choices of target), is what makes a seed replay the same run; each planned fault also
 * forks a stream of its own so that its delays do not depend on how many targets the others found.
 */
export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed;
  }

  /** mulberry32: small, fast and the same in every Node version, unlike Math.random. */
  next(): number {
    let a = this.state | 0;
    a = (a + 0x6d2b79f5) | 0;
    this.state = a;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  between(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  /** Draws even from an empty list (and gives undefined), so that what follows stays on the seed's stream. */
  pickOrNone<T>(xs: readonly T[]): T | undefined {
    return xs[Math.floor(this.next() * xs.length)];
  }

  pick<T>(xs: readonly T[]): T {
    const x = this.pickOrNone(xs);
    if (x === undefined) throw new Error('pick from an empty list');
    return x;
  }

  fork(): Random {
    return new Random(Math.floor(this.next() * 2 ** 31));
  }
}
