/**
 * The simulated clock: a heap of callbacks by (time, order, sequence). Rounds run after every other
 * event of the same instant (order 1), so a round sees all of that instant's changes at once;
 * the sequence keeps ties in scheduling order, which makes runs reproducible.
 */
interface Event {
  t: number;
  order: number;
  seq: number;
  fn: () => void;
}

const before = (a: Event, b: Event) =>
  a.t < b.t || (a.t === b.t && (a.order < b.order || (a.order === b.order && a.seq < b.seq)));

export class Clock {
  now = 0;
  private seq = 0;
  private readonly heap: Event[] = [];

  at(t: number, fn: () => void, order = 0): void {
    const h = this.heap;
    h.push({ t: Math.max(t, this.now), order, seq: this.seq++, fn });
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  get size(): number {
    return this.heap.length;
  }

  /** Runs the next event; false when none is left or the next lies past `until`. */
  step(until = Infinity): boolean {
    const h = this.heap;
    const top = h[0];
    if (!top || top.t > until) return false;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    this.now = top.t;
    top.fn();
    return true;
  }
}
