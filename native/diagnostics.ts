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
