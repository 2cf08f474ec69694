/**
 * Fair share remembers: each tenant's usage of a pool decays with a half-life (Kueue's Admission
 * Fair Sharing, Slurm's PriorityDecayHalfLife): u ← u · 0.5^(Δt / halfLife) + held · Δt.
 */
export interface DecayedUsage {
  deviceSeconds: number;
  memoryByteSeconds: number;
}

export function decayUsage(
  prev: DecayedUsage,
  held: { devices: number; memoryBytes: number },
  elapsedSeconds: number,
  halfLifeSeconds: number,
): DecayedUsage {
  const dt = Math.max(0, elapsedSeconds);
  const keep = halfLifeSeconds > 0 ? 0.5 ** (dt / halfLifeSeconds) : 0;
  return {
    deviceSeconds: prev.deviceSeconds * keep + held.devices * dt,
    memoryByteSeconds: prev.memoryByteSeconds * keep + held.memoryBytes * dt,
  };
}
