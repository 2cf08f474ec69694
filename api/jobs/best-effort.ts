/**
 * Redis notices the API sends after a commit (the scheduler's wake-up, event notices that wake SSE
 * streams, a cancel's control message to the node): each only hurries what happens anyway (the
 * scheduler's round at least every `TIMESHARE_ROUND_INTERVAL_MS`, a stream's 5 s poll, the daemon's
 * assignment poll), so none may hold the answer to the request that committed. A connection that is
 * not `ready` is not written to at all: its commands would wait out ioredis's reconnection attempts
 * (up to seconds each, growing) and then fail. On a ready one they are waited for at most
 * `boundMs`; past it they go on in the background. What failed or was skipped is logged once an
 * outage per connection, until a notice gets through again.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../common/logger.js';

/** Long enough for a notice on a healthy connection (well under a millisecond), short for a person. */
export const NOTICE_BOUND_MS = 200;

/** Connections whose outage is logged already. */
const outageLogged = new WeakSet<Redis>();

export type NoticeOutcome = 'sent' | 'skipped' | 'failed' | 'pending';

export async function bestEffortNotice(
  redis: Redis,
  log: Pick<Logger, 'warn' | 'info'>,
  what: string,
  send: () => Promise<unknown>,
  boundMs = NOTICE_BOUND_MS,
): Promise<NoticeOutcome> {
  const outage = (err: unknown, outcome: NoticeOutcome): NoticeOutcome => {
    if (!outageLogged.has(redis)) {
      outageLogged.add(redis);
      log.warn(
        { err: err instanceof Error ? err.message : String(err), what },
        'Redis notices skipped while Redis is unavailable; the scheduler and streams catch up by polling',
      );
    }
    return outcome;
  };
  if (redis.status !== 'ready') return outage(`redis connection is ${redis.status}`, 'skipped');
  let timer: NodeJS.Timeout | undefined;
  const sent = send().then(
    (): NoticeOutcome => {
      if (outageLogged.delete(redis)) log.info({ what }, 'Redis notices are sent again');
      return 'sent';
    },
    (err: unknown) => outage(err, 'failed'),
  );
  const late = new Promise<NoticeOutcome>((resolve) => {
    timer = setTimeout(() => resolve('pending'), boundMs);
    timer.unref();
  });
  try {
    return await Promise.race([sent, late]);
  } finally {
    clearTimeout(timer);
  }
}
