// Build facts and the measurement hooks the benchmark and tests use; wrapped so failures are
// EngineErrors like everything else.
import { EngineError } from './errors.js';
import { nativeModule } from './engine-native.js';

export function buildInfo(): { blas: boolean; kernel: string } {
  return { ...nativeModule().build };
}

async function wrap<T>(p: () => Promise<T>): Promise<T> {
  const stack = new Error().stack;
  try {
    return await p();
  } catch (e) {
    throw EngineError.from(e, stack);
  }
}

export function benchGemm(o: {
  m: number;
  n: number;
  k: number;
  transA?: boolean;
  transB?: boolean;
  threads?: number;
  seconds?: number;
  kernel?: 'own' | 'blas';
}): Promise<number> {
  return wrap(() =>
    nativeModule().benchGemm({
      m: o.m,
      n: o.n,
      k: o.k,
      transA: o.transA ?? false,
      transB: o.transB ?? false,
      threads: o.threads ?? 2,
      seconds: o.seconds ?? 0.3,
      kernel: o.kernel ?? 'own',
    }),
  );
}

export function benchCopy(o: { bytes: number; threads?: number; seconds?: number }) {
  return wrap(() =>
    nativeModule().benchCopy({ bytes: o.bytes, threads: o.threads ?? 2, seconds: o.seconds ?? 0.3 }),
  );
}

export function gemmCheck(o: {
  m: number;
  n: number;
  k: number;
  transA?: boolean;
  transB?: boolean;
  beta?: number;
  threads?: number;
  generic?: boolean;
}): Promise<number> {
  return wrap(() =>
    nativeModule().gemmCheck({
      m: o.m,
      n: o.n,
      k: o.k,
      transA: o.transA ?? false,
      transB: o.transB ?? false,
      beta: o.beta ?? 0,
      threads: o.threads ?? 2,
      generic: o.generic ?? false,
    }),
  );
}

/**
 * Runs `runs` back-to-back thread-pool jobs (2 and 8 tasks alternately) and counts tasks that ran
 * more than once or not at all; `delayUs` > 0 makes the workers join late and claim slowly, which
 * replays the interleaving of the pool's handoff on purpose (see pool_check in bench-exports.cc).
 */
export function poolCheck(o: {
  threads?: number;
  runs: number;
  delayUs?: number;
}): Promise<{ duplicated: number; missing: number }> {
  return wrap(() =>
    nativeModule().poolCheck({ threads: o.threads ?? 2, runs: o.runs, delayUs: o.delayUs ?? 0 }),
  );
}

export function gradCheck(o: { objective: 'sft' | 'grpo'; samples?: number; step?: number; seed?: number }) {
  return wrap(() =>
    nativeModule().gradCheck({
      objective: o.objective,
      samples: o.samples ?? 4,
      step: o.step ?? 1e-2,
      seed: o.seed ?? 1,
    }),
  );
}
