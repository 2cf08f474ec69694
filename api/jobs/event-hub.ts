/**
 * One Redis subscription per API process fans event notifications out to the SSE streams open on
 * it, so a thousand watchers cost one connection, not a thousand.
 */
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { JobEventNotice } from '../../common/jobs/notify.js';

export class EventHub {
  private readonly emitter = new EventEmitter();

  private constructor(private readonly sub: Redis) {
    this.emitter.setMaxListeners(0);
  }

  static async start(sub: Redis, channel: string): Promise<EventHub> {
    const hub = new EventHub(sub);
    sub.on('message', (_channel: string, raw: string) => {
      try {
        const notice = JSON.parse(raw) as JobEventNotice;
        hub.emitter.emit(notice.jobId, notice);
      } catch {
        // Not ours; ignore.
      }
    });
    await sub.subscribe(channel);
    return hub;
  }

  on(jobId: string, listener: (n: JobEventNotice) => void): () => void {
    this.emitter.on(jobId, listener);
    return () => this.emitter.off(jobId, listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
    await this.sub.quit().catch(() => undefined);
  }
}
