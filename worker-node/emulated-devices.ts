/**
 * Test-only device speed: `TIMESHARE_TEST_DEVICE_WORK=<generate ms>:<train ms>[:<job name>]` in a
 * worker's environment adds, before every `generate` of a spatial or hybrid job's generator and
 * every `train` of its learner (of its jobs, or its jobs of that name), a wait of that many
 * milliseconds divided by the engine's device count; temporal jobs are untouched. A CPU machine
 * of two cores cannot show an engine getting faster on more devices (its threads share the cores),
 * and the reactive balancer acts on nothing else; with this, the stage loop measures devices whose
 * speed adds up, as the stage-loop harness's `wrap` gives them in process
 * (worker-node/test/reactive-balancer.test.ts). The real engines still do all the work. The
 * end-to-end balancer test (test/e2e/balancer-move.test.ts) uses it; unset, nothing changes.
 */
import type { Engine } from '../native/index.js';

export interface DeviceWork {
  generateMs: number;
  trainMs: number;
  job: string | null;
}

export function parseDeviceWork(value: string | undefined): DeviceWork | null {
  const m = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)(?::(.+))?$/.exec(value ?? '');
  return m ? { generateMs: Number(m[1]), trainMs: Number(m[2]), job: m[3] ?? null } : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wraps the engine's calls of its role (`generate` for a generator, `train` for a learner) on `devices`. */
export function emulateDevices(
  engine: Engine,
  role: 'generator' | 'learner',
  devices: number,
  jobName: string,
  env: NodeJS.ProcessEnv = process.env,
): Engine {
  const work = parseDeviceWork(env.TIMESHARE_TEST_DEVICE_WORK);
  if (!work || (work.job !== null && work.job !== jobName)) return engine;
  const n = Math.max(1, devices);
  if (role === 'generator') {
    const generate = engine.generate.bind(engine);
    engine.generate = async (o) => {
      await sleep(work.generateMs / n);
      return generate(o);
    };
  } else {
    const train = engine.train.bind(engine);
    engine.train = async (o) => {
      await sleep(work.trainMs / n);
      return train(o);
    };
  }
  return engine;
}
