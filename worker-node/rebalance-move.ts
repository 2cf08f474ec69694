/**
 * How the reactive balancer moves a device (balancer.ts decides when): at a step boundary, with
 * the generator paused and every device of the job held in one acquire, both engines are restarted
 * on their new device sets from the current state — the learner from a scratch checkpoint of its
 * weights, optimizer, RNG and weight version; the generator fresh, attached to the new learner's
 * weight publication. An engine's devices (threads, arena) are fixed when it is created, so a
 * restart is the one way to resize it; the move's cost is what the balancer measures and charges.
 *
 * What must stay true: the old learner is closed (which unlinks its weight segment) before the new
 * one publishes under the same name; the engines come back offloaded, as a job process keeps them
 * between holds; micro-batches already generated stay in the pipe (plain host arrays) and are
 * trained after the move.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEngine, Engine, type CreateEngineOptions } from '../native/index.js';
import type { Placement } from '../common/node-protocol/index.js';

/** Creates a job's engines on a number of its devices (job-runner.ts and the harness implement it). */
export interface EngineFactory {
  /** The learner from a checkpoint directory (weights, optimizer, RNG, weight version), offloaded. */
  learnerFrom(dir: string, devices: number): Promise<Engine>;
  /** A fresh generator, offloaded; its weights come from the learner's publication. */
  generator(devices: number): Promise<Engine>;
}

/** The engine device of `devices` of a placement's devices (each a thread budget and an arena share). */
export function deviceShare(placement: Pick<Placement, 'threadsPerDevice' | 'memoryBytes'>, devices: number) {
  return {
    kind: 'cpu' as const,
    threads: placement.threadsPerDevice * devices,
    memoryBytes: placement.memoryBytes * devices,
  };
}

async function offloaded(e: Engine): Promise<Engine> {
  if ((await e.info()).onloaded) await e.offload();
  return e;
}

/** A job process's factory: the job's engine options (job-runner.ts) on other device counts. */
export function jobEngineFactory(
  opts: CreateEngineOptions,
  placement: Pick<Placement, 'threadsPerDevice' | 'memoryBytes'>,
  /** Wraps each engine made (a test-only device emulation, emulated-devices.ts); default: none. */
  wrap: (e: Engine, role: 'learner' | 'generator', devices: number) => Engine = (e) => e,
): EngineFactory {
  return {
    learnerFrom: async (dir, devices) =>
      wrap(
        await offloaded(await Engine.fromCheckpoint(dir, deviceShare(placement, devices))),
        'learner',
        devices,
      ),
    generator: async (devices) =>
      wrap(
        await offloaded(
          createEngine({ ...opts, device: deviceShare(placement, devices), seed: (opts.seed ?? 1) + 1 }),
        ),
        'generator',
        devices,
      ),
  };
}

export interface SwapInput {
  learner: Engine;
  generator: Engine;
  factory: EngineFactory;
  /**
   * Fencing tokens of the hold on all the job's devices: the highest of them (`all`), and the
   * highest over each new set. Tokens grow per device from different starts, so an engine must see
   * the highest over the devices it holds from then on: given `all`, a generator moved to devices
   * whose tokens were lower refused its next hold's token as stale and the job process died.
   */
  tokens: { all: number; learner: number; generator: number };
  split: { generate: number; train: number };
  /** The shared-memory name the learner publishes weights under. */
  shm: string;
}

/** Runs under a hold of all the job's devices; returns the engines on the new sets. */
export async function swapEngines(o: SwapInput): Promise<{ learner: Engine; generator: Engine }> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'timeshare-rebalance-'));
  try {
    await o.learner.onload(o.tokens.all);
    await o.learner.saveCheckpoint(scratch, { withOptimizer: true });
    await o.learner.close();
    await o.generator.close();
    const learner = await o.factory.learnerFrom(scratch, o.split.train);
    await learner.onload(o.tokens.learner);
    await learner.publishWeights(o.shm);
    await learner.offload();
    const generator = await o.factory.generator(o.split.generate);
    await generator.onload(o.tokens.generator);
    await generator.attachWeights(o.shm);
    await generator.pullWeights();
    await generator.offload();
    return { learner, generator };
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
