/**
 * Loaded into every child of `npm start` (`node --import`): when the launcher dies without
 * stopping its children (SIGKILL, a crash), the child notices that its parent changed and stops
 * itself with SIGTERM — the same orderly shutdown Ctrl-C gives it — so no API, scheduler or worker
 * is left behind holding ports, device locks or jobs. A child that does not stop within the grace
 * period (TIMESHARE_PARENT_GRACE_MS) is ended outright.
 */
import { z } from 'zod';
import { configOrExit, parseConfig } from '../../common/config.js';
import { parentGraceShape } from './parent-grace.js';

const parent = process.ppid;
const graceMs = configOrExit('parent-watch', () =>
  parseConfig(z.object(parentGraceShape), process.env),
).TIMESHARE_PARENT_GRACE_MS;

const watch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(watch);
  process.stderr.write(`parent process ${parent} is gone: stopping\n`);
  setTimeout(() => process.exit(1), graceMs).unref();
  process.kill(process.pid, 'SIGTERM');
}, 500);
watch.unref();
