/**
 * The spec of issue 42 finding 2: `steps: ` and `levels` nested flow sequences. With
 * 200 000 levels (400 KB) it held dag-service's only thread for 18 s and left 1.25 GB
 * resident; with 500 000 (1 MB) it answered `resource_unavailable` after 10 s.
 */
export function nestingAttackSpec(levels: number): string {
  return `steps: ${'['.repeat(levels)}${']'.repeat(levels)}`;
}

/** What every surface answers for it: refused by the pre-scan at the 65th level. */
export const NESTING_ATTACK_ERROR =
  'invalid YAML: collections nest deeper than 64 levels at line 1, column 71 (the nesting depth is bounded)';

/** A flat mapping of `keys` keys, the last repeating the first (the `yaml` library's quadratic key check). */
export function manyKeysSpec(keys: number): string {
  const lines = ['steps:', '  - name: a', '    run: echo a', 'env:'];
  for (let i = 0; i < keys; i += 1) lines.push(`  K${i}: v`);
  lines.push('  K0: again', '');
  return lines.join('\n');
}
