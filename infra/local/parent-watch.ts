/**
 * Loaded into every child of `npm start` (`node --import`): when the launcher dies without
 * stopping its children (SIGKILL, a crash), the child notices that its parent changed and stops
 * itself with SIGTERM — the same orderly shutdown Ctrl-C gives it — so no API, scheduler or worker
 * is left behind holding ports, device locks or jobs. A child that does not stop within the grace
 * period (TIMESHARE_PARENT_GRACE_MS) is ended outright.
 */
const parent = process.ppid;
const graceMs = Number(process.env.TIMESHARE_PARENT_GRACE_MS ?? 30_000);

const watch = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(watch);
  process.stderr.write(`parent process ${parent} is gone: stopping\n`);
  setTimeout(() => process.exit(1), graceMs).unref();
  process.kill(process.pid, 'SIGTERM');
}, 500);
watch.unref();
