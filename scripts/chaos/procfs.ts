/**
 * What /proc says about a process. The soak asks the kernel rather than the daemons because the
 * daemons are what it kills and pauses: their own view is exactly what may be wrong.
 */
import { readFileSync } from 'node:fs';

/** Fields after the command name, which may itself hold spaces. */
function statFields(pid: number): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

/** R, S, D, T (stopped), Z (zombie)…; null once the process is gone. */
export function procState(pid: number): string | null {
  try {
    return statFields(pid)[0]!;
  } catch {
    return null;
  }
}

/** CPU ticks used so far (user + system); −1 once the process is gone. */
export function procTicks(pid: number): number {
  try {
    const f = statFields(pid);
    return Number(f[11]) + Number(f[12]);
  } catch {
    return -1;
  }
}

export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const d of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/))
      if (d) out.push(Number(d));
  } catch {
    // gone: no children
  }
  return out;
}
