// Device-lock errors: classes carrying the ids a caller needs, with their stable codes from the one
// catalogue (common/errors.ts). Scripts return negative numbers; `errorFromScript` is the only place
// that turns them into errors, so every caller sees the same messages.
import { LockErrorCode } from '../errors.js';

export { LockErrorCode };

/** Negative return codes of the Lua scripts (see each script's header). */
export const ScriptCode = {
  WaiterExists: -1,
  DevicesBusy: -2,
  LockLost: -3,
  WaiterNotFound: -4,
} as const;

export class DeviceLockError extends Error {
  constructor(
    readonly code: LockErrorCode,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class WaiterExistsError extends DeviceLockError {
  constructor(readonly waiterId: string) {
    super(LockErrorCode.WaiterExists, `a live waiter with id ${waiterId} already exists`);
  }
}

export class DevicesBusyError extends DeviceLockError {
  constructor(
    readonly waiterId: string,
    readonly devices: readonly string[],
  ) {
    super(LockErrorCode.DevicesBusy, `devices ${devices.join(', ')} cannot be granted now`);
  }
}

export interface LostDevice {
  device: string;
  /** How the hold ended (lapsed lease, admin revoke, already released), `superseded` when a
   *  newer hold on the device came and went since, so the end of ours is only in the timeline, or
   *  `wiped` when Redis lost the device's state (a restart without persistence, deleted keys) and
   *  nobody was granted it since. */
  reason: 'lapsed' | 'revoked' | 'released' | 'superseded' | 'wiped';
}

export class LockLostError extends DeviceLockError {
  constructor(
    readonly waiterId: string,
    readonly job: string,
    readonly stage: string,
    readonly lost: readonly LostDevice[],
  ) {
    const what = lost.map((l) => `${l.device} (${l.reason})`).join(', ');
    super(
      LockErrorCode.LockLost,
      `job ${job} stage ${stage} lost its lock on ${what}; its fencing tokens are no longer valid`,
    );
  }
}

export class WaiterNotFoundError extends DeviceLockError {
  constructor(readonly waiterId: string) {
    super(LockErrorCode.WaiterNotFound, `no live waiter with id ${waiterId}`);
  }
}

export class WaiterExpiredError extends DeviceLockError {
  constructor(readonly waiterId: string) {
    super(
      LockErrorCode.WaiterExpired,
      `waiter ${waiterId} was dropped: it missed its heartbeat and its entry expired`,
    );
  }
}

export class AcquireTimeoutError extends DeviceLockError {
  constructor(
    readonly waiterId: string,
    readonly devices: readonly string[],
    readonly timeoutMs: number,
  ) {
    super(LockErrorCode.AcquireTimeout, `devices ${devices.join(', ')} not granted within ${timeoutMs} ms`);
  }
}

export class AcquireAbortedError extends DeviceLockError {
  constructor(
    readonly waiterId: string,
    readonly devices: readonly string[],
  ) {
    super(LockErrorCode.AcquireAborted, `acquire of ${devices.join(', ')} aborted`);
  }
}

export interface ScriptErrorContext {
  waiterId: string;
  devices: readonly string[];
  job?: string;
  stage?: string;
}

/** Maps a script's negative return code (and its payload) to the matching error. */
export function errorFromScript(code: number, payload: string, ctx: ScriptErrorContext): DeviceLockError {
  switch (code) {
    case ScriptCode.WaiterExists:
      return new WaiterExistsError(ctx.waiterId);
    case ScriptCode.DevicesBusy:
      return new DevicesBusyError(ctx.waiterId, ctx.devices);
    case ScriptCode.LockLost: {
      const raw = JSON.parse(payload) as { d: string; r: LostDevice['reason'] }[];
      const lost = raw.map((l) => ({ device: l.d, reason: l.r }));
      return new LockLostError(ctx.waiterId, ctx.job ?? '', ctx.stage ?? '', lost);
    }
    case ScriptCode.WaiterNotFound:
      return new WaiterNotFoundError(ctx.waiterId);
    default:
      throw new Error(`device-lock script returned unknown code ${code}`);
  }
}
