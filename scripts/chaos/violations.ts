import type { Clock } from './clock.js';

export interface Violation {
  invariant: string;
  detail: string;
  /** ms since the soak began */
  at: number;
}

/**
 * Broken invariants, and how many times one was checked (a run that checked nothing proves
 * nothing). Monitors see the same breach on every poll: it is reported once.
 */
export class Violations {
  readonly list: Violation[] = [];
  private readonly seen = new Set<string>();
  private checked = 0;

  constructor(private readonly clock: Clock) {}

  get checks(): number {
    return this.checked;
  }

  count(): void {
    this.checked++;
  }

  violate(invariant: string, detail: string): void {
    const key = `${invariant}|${detail}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.list.push({ invariant, detail, at: this.clock.elapsedMs() });
    this.clock.log(`!!! VIOLATION ${invariant}: ${detail}`);
  }
}
