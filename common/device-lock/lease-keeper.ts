// Renews a grant's lease in the background. A holder must stop touching its devices once
// `onLost` fires: the engine refuses its fencing tokens from then on anyway. A hold that Redis
// forgot (every device `wiped`: nobody was granted them since) is taken again at once, without
// waiting, under new tokens that `grant` then returns: losing Redis's data must not cost a holder
// its stage. If anyone got there first, the hold is lost.
import type { DeviceLockService } from './device-lock-service.js';
import { LockLostError } from './errors.js';
import type { Grant } from './types.js';

export interface LeaseKeeperOptions {
  /** Renew period; default a third of the lease, so two renewals may fail before it lapses. */
  intervalMs?: number;
  onLost: (err: LockLostError) => void;
  /** Transient renew failures (Redis unreachable): retried until the lease must have lapsed. */
  onError?: (err: unknown) => void;
}

export class LeaseKeeper {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private current: Grant;
  /** Local-clock deadline by which the last successful renew guarantees the lease. */
  private localDeadline: number;

  constructor(
    private readonly locks: DeviceLockService,
    grant: Grant,
    private readonly opts: LeaseKeeperOptions,
  ) {
    this.current = grant;
    // Conservative: the grant was made at some unknown moment before now.
    this.localDeadline = Date.now() + grant.leaseMs - 1;
    this.schedule();
  }

  get grant(): Grant {
    return this.current;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    const period = this.opts.intervalMs ?? Math.max(1, Math.floor(this.current.leaseMs / 3));
    this.timer = setTimeout(() => void this.tick(), period);
  }

  private async tick(): Promise<void> {
    const startedAt = Date.now();
    try {
      this.current = await this.locks.renew(this.current);
      this.localDeadline = startedAt + this.current.leaseMs;
    } catch (err) {
      if (this.stopped) return;
      if (err instanceof LockLostError) return this.retake(err);
      this.opts.onError?.(err);
      if (Date.now() >= this.localDeadline) {
        const g = this.current;
        const lost = g.devices.map((device) => ({ device, reason: 'lapsed' as const }));
        return this.lose(new LockLostError(g.waiterId, g.job, g.stage, lost));
      }
    }
    this.schedule();
  }

  private async retake(err: LockLostError): Promise<void> {
    if (!err.lost.every((l) => l.reason === 'wiped')) return this.lose(err);
    const g = this.current;
    try {
      this.current = await this.locks.acquire({
        devices: g.devices,
        job: g.job,
        stage: g.stage,
        holder: g.holder,
        leaseMs: g.leaseMs,
        timeoutMs: 0,
        reclaim: true,
      });
    } catch {
      return this.lose(err);
    }
    if (this.stopped) {
      // Stopped meanwhile: its owner released the old grant, so the new one goes too.
      await this.locks.release(this.current).catch(() => undefined);
      return;
    }
    this.localDeadline = Date.now() + this.current.leaseMs - 1;
    this.schedule();
  }

  private lose(err: LockLostError): void {
    this.stop();
    this.opts.onLost(err);
  }
}
