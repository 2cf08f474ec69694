/**
 * Per-second metering: what the device-seconds a node reports were spent on. A hold of the device
 * lock (stage-loop.ts) is onload → run → offload; of its run, the engine measures the part spent
 * computing. So each held device-second is one of
 *   running    the engine computing (generation, training, a checkpoint or weight sync),
 *   switching  onload and offload (the cost of time-sharing),
 *   idle       held but neither: bookkeeping between engine calls while the devices stay held
 *              (rewards, metrics, evaluation's host side, checkpoint hashing and upload).
 * The API (common/jobs/reports.ts) and the daemon's metrics split the same way, from this function.
 */
import type { StageProfileReport } from './reports.js';

export interface DeviceTime {
  running: number;
  switching: number;
  idle: number;
}

export const deviceStates = ['running', 'switching', 'idle'] as const satisfies readonly (keyof DeviceTime)[];

/** Device-seconds of one hold by state: seconds × devices, split. */
export function splitHold(
  p: Pick<StageProfileReport, 'seconds' | 'devices' | 'onloadSeconds' | 'offloadSeconds' | 'computeSeconds'>,
): DeviceTime {
  const switching = Math.min(p.seconds, p.onloadSeconds + p.offloadSeconds);
  const run = p.seconds - switching;
  // Unknown compute (an older daemon): the whole run counts as running, as it did before.
  const running = p.computeSeconds === null ? run : Math.min(run, p.computeSeconds);
  return {
    running: running * p.devices,
    switching: switching * p.devices,
    idle: (run - running) * p.devices,
  };
}

/**
 * A report's device-seconds by state: the holds' split, scaled to `deviceSeconds` (what the report
 * charges). Device-seconds no profile explains count as running.
 */
export function splitReport(profiles: readonly StageProfileReport[], deviceSeconds: number): DeviceTime {
  const sum: DeviceTime = { running: 0, switching: 0, idle: 0 };
  for (const p of profiles) {
    const h = splitHold(p);
    sum.running += h.running;
    sum.switching += h.switching;
    sum.idle += h.idle;
  }
  const explained = sum.running + sum.switching + sum.idle;
  if (!(deviceSeconds > 0)) return { running: 0, switching: 0, idle: 0 };
  if (explained <= 0) return { running: deviceSeconds, switching: 0, idle: 0 };
  const k = Math.min(1, deviceSeconds / explained);
  return {
    running: sum.running * k + Math.max(0, deviceSeconds - explained),
    switching: sum.switching * k,
    idle: sum.idle * k,
  };
}

/** `t` scaled to `total` (what the API recorded after bounding the charge), states in proportion. */
export function scaleTo(t: DeviceTime, total: number): DeviceTime {
  const sum = t.running + t.switching + t.idle;
  if (!(sum > 0) || !(total > 0)) return { running: 0, switching: 0, idle: 0 };
  const k = total / sum;
  return { running: t.running * k, switching: t.switching * k, idle: t.idle * k };
}
