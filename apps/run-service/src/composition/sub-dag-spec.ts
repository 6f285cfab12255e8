import type { NormalizedDag } from '@dagu-mcp/dag-spec';
import { parseDagSpecOffThread } from '../core/dag-spec-threads';

/**
 * Where a `dag.run` / `dag.enqueue` child's spec comes from (dagu-model §3):
 * a local sub-DAG — a later document of the parent's YAML stream whose
 * `name` matches — first, else a stored DAG (read from dag-service). A local
 * child's snapshot is a stream of its own document followed by the parent's
 * other sub-DAG documents, so it can call its siblings in turn.
 */

/** A resolved child spec. */
export interface ChildSpec {
  spec: string;
  dag: NormalizedDag;
  source: 'local' | 'stored';
}

/** Reads a stored DAG's YAML; `undefined` when there is no such DAG (runs/stored-dag-specs.ts `read`). */
export type StoredSpecReader = (name: string) => Promise<string | undefined>;

/** The documents of a YAML stream (split at `---` marker lines). */
export function yamlDocuments(stream: string): string[] {
  return stream.split(/^---[ \t]*(?:#.*)?$/m).filter((doc) => doc.trim() !== '');
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The stream a local sub-DAG `name` of `parentSpec` runs as, or `undefined` when the stream has no such document. */
export function localSubDagStream(parentSpec: string, name: string): string | undefined {
  const docs = yamlDocuments(parentSpec);
  const namePattern = new RegExp(`^name:[ \\t]*["']?${escapeRegex(name)}["']?[ \\t]*(?:#.*)?$`, 'm');
  const index = docs.findIndex((doc, i) => i > 0 && namePattern.test(doc));
  const own = docs[index];
  if (index < 0 || own === undefined) return undefined;
  const siblings = docs.filter((_, i) => i > 0 && i !== index);
  return [own, ...siblings].map((doc) => doc.replace(/^\n+/, '')).join('---\n');
}

/**
 * Resolves the child DAG `name` of a parent run.
 * @returns the child spec, or an error text (unknown DAG, invalid spec).
 */
export async function resolveChildSpec(
  parentSpec: string,
  name: string,
  readStored: StoredSpecReader | undefined,
): Promise<ChildSpec | { error: string }> {
  const local = localSubDagStream(parentSpec, name);
  let spec = local;
  if (spec === undefined && readStored !== undefined) spec = await readStored(name);
  if (spec === undefined) return { error: `sub-DAG ${name} not found (no local sub-DAG or stored DAG of that name)` };
  const parsed = await parseDagSpecOffThread(spec, name);
  if (!parsed.valid || parsed.dag === undefined)
    return { error: `sub-DAG ${name} is invalid: ${parsed.errors.join('; ')}` };
  return { spec, dag: parsed.dag, source: local !== undefined ? 'local' : 'stored' };
}
