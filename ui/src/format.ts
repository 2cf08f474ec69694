/** Display helpers shared by the views. */
import type { Job } from '../../sdk/src/index.js';

export const finalStatuses = new Set(['succeeded', 'failed', 'cancelled']);

export const statusColor: Record<string, string> = {
  queued: 'gray',
  admitted: 'indigo',
  placed: 'cyan',
  running: 'blue',
  preempted: 'orange',
  succeeded: 'green',
  failed: 'red',
  cancelled: 'dark',
};

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const s = Math.round((now - Date.parse(iso)) / 1000);
  const abs = Math.abs(s);
  const text = abs < 60 ? `${abs}s` : abs < 3600 ? `${Math.round(abs / 60)}m` : `${(abs / 3600).toFixed(1)}h`;
  return s >= 0 ? `${text} ago` : `in ${text}`;
}

export const time = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleTimeString() : '–');

export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(u ? 1 : 0)} ${units[u]}`;
}

/** A stable, distinct colour per job id (golden-angle hues), so a job keeps its colour everywhere. */
export function jobColor(id: string): string {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return `hsl(${(h * 137.508) % 360} 65% 50%)`;
}

export const waitReasonText: Record<string, string> = {
  capacity: 'waiting for free devices',
  quota: 'over the tenant quota',
  fair_share: 'other tenants are below their fair share',
  priority: 'higher-priority jobs go first',
  crash_loop: 'backing off after repeated failures',
  preempted: 'preempted; waiting to resume from its checkpoint',
  paused: 'paused by its tenant; resume it to run',
  unschedulable: 'no node of its pool can hold it',
};

/**
 * A queued job no node of its pool can hold (more devices than any node has, more memory a device
 * than any device has): the scheduler's `unschedulable` wait. Without this it read as an ordinary
 * wait for free devices.
 */
export function noNodeHolds(j: Job): boolean {
  return j.status === 'queued' && !j.pausedAt && j.waitReason === 'unschedulable';
}
