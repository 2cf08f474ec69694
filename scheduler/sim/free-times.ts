/**
 * Slots (a generation batch's sequence slots) by the time each is free, kept as (time, count)
 * entries in a min-heap: slots freed together are one entry.
 */
export class FreeTimes {
  private readonly at: number[] = [];
  private readonly count: number[] = [];
  /** Devices held, over all entries. */
  size = 0;

  add(at: number, count: number): void {
    if (count <= 0) return;
    this.size += count;
    const { at: t, count: c } = this;
    let i = t.length;
    t.push(at);
    c.push(count);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (t[p]! <= at) break;
      t[i] = t[p]!;
      c[i] = c[p]!;
      i = p;
    }
    t[i] = at;
    c[i] = count;
  }

  /** Removes the `need` earliest devices (need ≤ size) and returns when the last of them is free. */
  take(need: number): number {
    let latest = -Infinity;
    while (need > 0 && this.at.length > 0) {
      const at = this.at[0]!;
      const n = this.count[0]!;
      latest = at;
      if (n > need) {
        // The head keeps its time, so the heap order stands.
        this.count[0] = n - need;
        this.size -= need;
        return latest;
      }
      this.popHead();
      this.size -= n;
      need -= n;
    }
    return latest;
  }

  private popHead(): void {
    const { at: t, count: c } = this;
    const lastAt = t.pop()!;
    const lastCount = c.pop()!;
    if (t.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= t.length) break;
      const r = l + 1;
      const m = r < t.length && t[r]! < t[l]! ? r : l;
      if (t[m]! >= lastAt) break;
      t[i] = t[m]!;
      c[i] = c[m]!;
      i = m;
    }
    t[i] = lastAt;
    c[i] = lastCount;
  }
}
