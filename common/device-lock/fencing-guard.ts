// The device side of fencing (DESIGN §3): whoever owns a device (the engine at onload, a
// checkpoint writer) remembers the highest token it has accepted per device and refuses any
// lower one. Tokens strictly increase per device across grants, so a holder whose lease lapsed
// or was revoked can never touch the device again once its successor did, even if it has not
// noticed yet. In-process only: the engine keeps one per device it serves.
export class FencingGuard {
  private readonly highest = new Map<string, number>();

  /** Accepts `token` for `device` iff no higher token was accepted before (equal: same holder). */
  accept(device: string, token: number): boolean {
    const seen = this.highest.get(device) ?? 0;
    if (token < seen) return false;
    this.highest.set(device, token);
    return true;
  }

  /** Accepts a whole grant's tokens, all or none. */
  acceptAll(tokens: Readonly<Record<string, number>>): boolean {
    const entries = Object.entries(tokens);
    if (entries.some(([d, t]) => t < (this.highest.get(d) ?? 0))) return false;
    for (const [d, t] of entries) this.highest.set(d, t);
    return true;
  }
}
