/**
 * A "billion laughs" DAG spec for the tests of the expansion bound (issue 17
 * "YAML and JSON bombs"): one flow list of `values` scalars anchored once and
 * aliased `aliases` times inside an `http.request` body, a field that keeps
 * any JSON. With the defaults it is about 23 KB and expands to ten million
 * values; the `yaml` library's own alias count (at most 1000) lets it through.
 */
export function aliasBombSpec(values = 10_000, aliases = 999): string {
  const flat = `[${Array.from({ length: values }, () => 'a').join(',')}]`;
  const uses = `[${Array.from({ length: aliases }, () => '*a').join(',')}]`;
  return [
    'steps:',
    '  - name: s',
    '    action: http.request',
    '    with:',
    '      url: http://127.0.0.1:9/',
    '      method: POST',
    '      body:',
    `        a: &a ${flat}`,
    `        b: ${uses}`,
    '',
  ].join('\n');
}
