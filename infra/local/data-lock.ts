/**
 * One `npm start` per data folder. Two launchers on different ports shared `.data/`: one outbox
 * folder for two workers under the same node name (each could send, and delete, the other's
 * records), one checkpoint store, one private PostgreSQL data directory. The second now stops
 * before it starts anything, naming the first; a lock whose launcher died (SIGKILL, a crash) is
 * taken over.
 */
import { mkdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'launcher.pid';

export class DataDirInUse extends Error {
  override readonly name = 'DataDirInUse';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `another npm start (pid ${pid}) is using ${dir}: stop it first, or give this one a folder of ` +
        'its own with TIMESHARE_DATA_DIR',
    );
  }
}

/** Whether a process with this id exists (one we may not signal exists too). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims `dir` for this process (`pid`), or throws `DataDirInUse` while another live process holds
 * it. Returns the release, which removes the lock if it is still this process's, and the folder
 * too if nothing else was written there.
 */
export function claimDataDir(dir: string, pid = process.pid): () => void {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, `${pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      // A third try lost the race to another launcher taking the same stale lock twice: give up.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt === 2) throw err;
    }
    let holder = NaN;
    try {
      holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
    } catch {
      continue; // released meanwhile
    }
    if (Number.isInteger(holder) && holder > 0 && holder !== pid && alive(holder))
      throw new DataDirInUse(dir, holder);
    // Its launcher is gone (or the file is not a pid): the lock is stale.
    try {
      unlinkSync(file);
    } catch {
      // Another launcher took it over first: the next try says whose it is.
    }
  }
  return () => {
    try {
      if (Number.parseInt(readFileSync(file, 'utf8'), 10) !== pid) return;
      unlinkSync(file);
      rmdirSync(dir);
    } catch {
      // Taken over, or the folder holds data: it stays.
    }
  };
}
