import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs; every process names itself so interleaved `npm start` output stays legible. */
export function createLogger(process: string, level = 'info'): Logger {
  return pino({ name: process, level, base: { proc: process } });
}
