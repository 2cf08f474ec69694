/** Small helpers the benchmarks share: percentiles and a fixed-concurrency runner. */
export function percentile(sortedMs: number[], p: number): number {
  if (!sortedMs.length) return NaN;
  const i = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[i]!;
}

export interface RunResult {
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

/** Runs `total` calls of `fn` with `concurrency` in flight, timing each one. */
export async function runConcurrent(
  total: number,
  concurrency: number,
  fn: (i: number) => Promise<boolean>,
): Promise<RunResult> {
  const latencies: number[] = new Array(total);
  let next = 0;
  let errors = 0;
  const start = process.hrtime.bigint();
  async function lane() {
    for (;;) {
      const i = next++;
      if (i >= total) return;
      const t0 = process.hrtime.bigint();
      const ok = await fn(i).catch(() => false);
      latencies[i] = Number(process.hrtime.bigint() - t0) / 1e6;
      if (!ok) errors++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    seconds,
    perSecond: total / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    errors,
  };
}

export const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** Runs a benchmark and exits with its outcome (pools and clients it leaves open would hold the process). */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
