/**
 * The device lock's Redis out of reach, as a job process sees it. An outage is the platform's, not
 * the job's: a stage rides it out where the lock's guarantees allow (stage-loop.ts: a waiting
 * acquire holds nothing and tries again; a hold goes on while its LeaseKeeper still guarantees the
 * lease by the local clock, and is taken back under new tokens if Redis came back empty), and when
 * the lock cannot be had or kept for that long, the job process stops with `LOCK_OUTAGE_EXIT_CODE`
 * (job-runner.ts), which the daemon reports as `lost_contact`: the job keeps its attempt and
 * resumes from its last checkpoint. Before, the job process's Redis client gave up on a call after
 * 3 reconnect attempts (~0.3 s), the error crashed the job (exit 2, `crashed`, an attempt used),
 * and three Redis restarts failed an accepted job for good.
 */
import { DeviceLockError } from '../common/device-lock/index.js';

/** The device lock could not be reached for as long as the lock lets a stage wait for it or keep a hold. */
export class LockOutageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LockOutageError';
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * Whether a failed lock call failed because Redis could not be reached (the connection, not an
 * answer): the lock's own refusals (DeviceLockError) and bad arguments (TypeError) are not, nor is
 * an error Redis answered with, but a Redis still loading its data after a restart is.
 */
export function isLockOutage(err: unknown): boolean {
  if (!(err instanceof Error) || err instanceof DeviceLockError || err instanceof TypeError) return false;
  if (err instanceof LockOutageError) return true;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  return /Connection is closed|Stream isn't writeable|^LOADING |Command timed out/.test(err.message);
}

/**
 * The exit code of a job process that stopped because the device lock's Redis was out of reach
 * for longer than the lock allows (`LockOutageError`): the daemon reports the run `lost_contact`,
 * like a job process stopped by its daemon's silence (supervision.ts `LAPSED_EXIT_CODE`).
 */
export const LOCK_OUTAGE_EXIT_CODE = 4;
