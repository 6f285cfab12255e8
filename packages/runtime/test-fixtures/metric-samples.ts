/**
 * Reads Prometheus text exposition in tests of metrics (runtime's and the
 * gateway's), so both assert on the same parsed samples.
 */

/** One sample of the text exposition, e.g. `name_count{a="b"} 2`, as `{ labels, value }`. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of metric `name` (exact name: `x_count`, not `x_count_total`). */
export async function samples(render: () => Promise<{ body: string }>, name: string): Promise<Sample[]> {
  const { body } = await render();
  const out: Sample[] = [];
  for (const line of body.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] ?? ''] = pair[2] ?? '';
    out.push({ labels, value: Number(match[3]) });
  }
  return out;
}
