// Options in two stages: what the caller passes, then checked and completed with defaults.
// Contradictory or invalid values are a TypeError naming the field.
import type { DeviceLockOptions } from './types.js';

export interface CompiledOptions {
  prefix: string;
  defaultLeaseMs: number;
  waiterTtlMs: number;
  timelineMaxLen: number;
  maxIdleBlockingConnections: number;
  wipeGraceMs: number;
}

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v <= 0) throw new TypeError(`${name} must be a positive integer, got ${v}`);
  return v;
}

export function compileOptions(o: DeviceLockOptions): CompiledOptions {
  if (typeof o.prefix !== 'string' || o.prefix === '')
    throw new TypeError('prefix must be a non-empty string');
  const waiterTtlMs = positiveInt('waiterTtlMs', o.waiterTtlMs, 15_000);
  if (waiterTtlMs < 30) throw new TypeError(`waiterTtlMs must be at least 30 ms, got ${waiterTtlMs}`);
  const defaultLeaseMs = positiveInt('defaultLeaseMs', o.defaultLeaseMs, 30_000);
  const wipeGraceMs = o.wipeGraceMs ?? Math.floor(defaultLeaseMs / 2);
  if (!Number.isSafeInteger(wipeGraceMs) || wipeGraceMs < 0)
    throw new TypeError(`wipeGraceMs must be an integer >= 0, got ${wipeGraceMs}`);
  return Object.freeze({
    prefix: o.prefix,
    defaultLeaseMs,
    wipeGraceMs,
    waiterTtlMs,
    timelineMaxLen: positiveInt('timelineMaxLen', o.timelineMaxLen, 100_000),
    maxIdleBlockingConnections: positiveInt('maxIdleBlockingConnections', o.maxIdleBlockingConnections, 16),
  });
}

/** Checks an acquire's device list: non-empty, distinct, no empty ids. */
export function checkDevices(devices: readonly string[]): void {
  if (!Array.isArray(devices) || devices.length === 0)
    throw new TypeError('devices must be a non-empty array');
  const seen = new Set<string>();
  for (const d of devices) {
    if (typeof d !== 'string' || d === '') throw new TypeError('device ids must be non-empty strings');
    if (seen.has(d)) throw new TypeError(`device ${d} listed twice`);
    seen.add(d);
  }
}

export function checkNumber(name: string, v: number): void {
  if (!Number.isFinite(v)) throw new TypeError(`${name} must be a finite number, got ${v}`);
}

export function checkText(name: string, v: unknown): void {
  if (typeof v !== 'string' || v === '') throw new TypeError(`${name} must be a non-empty string`);
}
