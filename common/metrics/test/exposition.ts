/** Reading Prometheus expositions in the metrics tests. */

/** The value of one series in an exposition, whatever the order of its labels; null if absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (
      Object.keys(got).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => got[k] === v)
    )
      return Number(m[3]);
  }
  return null;
}
