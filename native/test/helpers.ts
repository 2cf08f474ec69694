// Shared fixtures: tiny engines (micro preset) so that every test file runs in seconds on 2 cores.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { createEngine, EngineError, type CreateEngineOptions, type Engine } from '../index.js';

export function microEngine(overrides: Partial<CreateEngineOptions> = {}): Engine {
  return createEngine({
    device: { kind: 'cpu', threads: 2, memoryBytes: 256 * 2 ** 20 },
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 2 },
    seed: 7,
    ...overrides,
  });
}

const made: string[] = [];
// Every test file runs in its own process: the folders go with it, passed or failed.
process.once('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary folder, deleted when the test process exits. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `timeshare-${prefix}-`));
  made.push(dir);
  return dir;
}

export async function expectCode(p: Promise<unknown> | (() => unknown), code: string): Promise<EngineError> {
  try {
    if (typeof p === 'function') await p();
    else await p;
  } catch (e) {
    if (!(e instanceof EngineError)) throw new Error(`expected EngineError ${code}, got ${String(e)}`);
    if (e.code !== code) throw new Error(`expected ${code}, got ${e.code}: ${e.message}`);
    return e;
  }
  throw new Error(`expected EngineError ${code}, but the call succeeded`);
}

export const rlOptions = {
  generate: { numPrompts: 8, groupSize: 4, temperature: 1 },
  train: { algorithm: 'grpo' as const, lr: 1e-3 },
};
