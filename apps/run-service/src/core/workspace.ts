/**
 * The workspace of a DAG (dagu-model §10, Dagu spec 022b "a DAG's workspace
 * is its `workspace=` label, else `default`"): the trimmed value of its first
 * `workspace=<name>` label, else `default`.
 */
export function workspaceOfLabels(labels: readonly string[]): string {
  for (const label of labels) {
    if (!label.startsWith('workspace=')) continue;
    const value = label.slice('workspace='.length).trim();
    if (value !== '') return value;
  }
  return 'default';
}
