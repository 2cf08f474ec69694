/**
 * Seconds since the soak began: every log line, fault and violation carries them, and the
 * processes' own logs (under the log directory) are stamped the same way, so they line up.
 */
export class Clock {
  readonly t0 = Date.now();

  elapsedMs(): number {
    return Date.now() - this.t0;
  }

  stamp(): string {
    return (this.elapsedMs() / 1000).toFixed(1).padStart(6);
  }

  log(...xs: unknown[]): void {
    console.log(`[${this.stamp()}s]`, ...xs);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
