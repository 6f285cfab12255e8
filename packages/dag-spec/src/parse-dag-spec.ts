/**
 * Entry point: a DAG YAML stream → validation result (dagu-model.md §3–4,
 * spec 022 `valid` / `errors` / `dag`).
 */
import { parseAllDocuments } from 'yaml';
import { checkDagName, parseDagDocument } from './dag.parser';
import type { DagSpecResult, NormalizedDag } from './dag.types';
import { ErrorSink } from './error-sink';
import { findReferenceWarnings } from './reference-warnings';
import { asMap } from './yaml-values';
import { checkExpandedSize, DEFAULT_EXPANSION_LIMITS, type ExpansionLimits } from './yaml-bounds';
import { DEFAULT_YAML_TEXT_BOUNDS, positionOf, prescanYaml, type YamlTextBounds } from './yaml-prescan';
import { duplicateKeyOffsets } from './unique-keys';

/** Options of `parseDagSpec`. */
export interface ParseDagSpecOptions {
  /**
   * The DAG's name as the caller knows it (the `name` of `dagu_change`). It is
   * the DAG's name even when the YAML `name` differs (as Dagu names a DAG by
   * its file); the YAML name is then kept as `dag.yamlName`. Without it the
   * YAML `name` is required.
   */
  name?: string;
  /**
   * Bounds of the stream once its aliases are expanded, each document on its
   * own (default {@link DEFAULT_EXPANSION_LIMITS}). A document past them is
   * `valid: false` before any value is built.
   */
  expansionLimits?: ExpansionLimits;
  /**
   * Bounds of the text checked before it is parsed (default
   * {@link DEFAULT_YAML_TEXT_BOUNDS}): a text past them is `valid: false` and never parsed.
   */
  textBounds?: YamlTextBounds;
}

/** First line of a `yaml` library error (its message continues with a source excerpt). */
function yamlMessage(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/:\s*$/, '');
}

/**
 * Validates and normalizes a DAG YAML stream. Never throws on user input.
 *
 * The first document is the DAG; each later non-empty document is a local
 * sub-DAG, which must have a valid, unique `name` (`dag.run` can call it by
 * that name). Every error found is returned, each shaped
 * `field '<f>': <message> (value: <v>)` where a field applies, prefixed with
 * its context (`step 'build': …`, `handler_on.exit: …`, `sub-DAG 'x': …`);
 * YAML syntax errors read `invalid YAML: <message from the yaml library>`;
 * a text past `opts.textBounds` reads `invalid YAML: collections nest deeper than 64
 * levels at line 1, column 71 (the nesting depth is bounded)` (or the size or values
 * bound), and is not parsed; a document whose aliases expand past
 * `opts.expansionLimits` reads `invalid YAML: aliases expand the document to more than …`.
 *
 * @returns `{valid, errors, warnings, dag, subDags}`; `dag` and `subDags` are
 *   present only when `valid` is true; `warnings` (references that will not
 *   resolve at run time, `reference-warnings.ts`) only when valid, else empty.
 */
export function parseDagSpec(yamlText: string, opts: ParseDagSpecOptions = {}): DagSpecResult {
  const sink = ErrorSink.create();
  try {
    return parseStream(yamlText, opts, sink);
  } catch (error: unknown) {
    // Not expected: the parsers validate every shape. Report rather than throw on user input.
    sink.plain(`invalid DAG spec: ${error instanceof Error ? error.message : String(error)}`);
    return { valid: false, errors: [...sink.errors], warnings: [], subDags: [] };
  }
}

function parseStream(yamlText: string, opts: ParseDagSpecOptions, sink: ErrorSink): DagSpecResult {
  const invalid = (): DagSpecResult => ({ valid: false, errors: [...sink.errors], warnings: [], subDags: [] });
  // Bounded before the parse: the yaml library's cost grows with what it is bounding.
  const problem = prescanYaml(yamlText, opts.textBounds ?? DEFAULT_YAML_TEXT_BOUNDS);
  if (problem !== undefined) {
    sink.plain(`invalid YAML: ${problem.message}`);
    return invalid();
  }
  // Duplicate keys are checked below, in linear time (unique-keys.ts), not by the library.
  const documents = parseAllDocuments(yamlText, { merge: true, uniqueKeys: false });
  if (!Array.isArray(documents) || documents.length === 0) {
    sink.plain('DAG spec is empty');
    return invalid();
  }
  for (const doc of documents)
    for (const error of doc.errors) sink.plain(`invalid YAML: ${yamlMessage(error.message)}`);
  if (sink.count > 0) return invalid();
  for (const doc of documents) {
    for (const offset of duplicateKeyOffsets(doc)) {
      const { line, column } = positionOf(yamlText, offset);
      sink.plain(`invalid YAML: Map keys must be unique at line ${line}, column ${column}`);
    }
  }
  if (sink.count > 0) return invalid();
  // Measured on the syntax tree first: building values of an alias bomb is the attack itself.
  for (const doc of documents) {
    const problem = checkExpandedSize(doc, opts.expansionLimits ?? DEFAULT_EXPANSION_LIMITS);
    if (problem !== undefined) sink.plain(`invalid YAML: ${problem}`);
  }
  if (sink.count > 0) return invalid();
  const values = documents.map((doc): unknown => {
    try {
      const value: unknown = doc.toJS({ mapAsMap: true, maxAliasCount: 1000 });
      return value;
    } catch (error: unknown) {
      // Alias problems (unresolved anchors, alias bombs) surface only when building values.
      sink.plain(`invalid YAML: ${yamlMessage(error instanceof Error ? error.message : String(error))}`);
      return undefined;
    }
  });
  if (sink.count > 0) return invalid();
  const [first, ...rest] = values;
  const root = asMap(first);
  if (!root) {
    sink.plain('DAG spec must be a YAML mapping');
    return invalid();
  }
  const dag = parseDagDocument(root, opts.name, sink);
  const subDags: NormalizedDag[] = [];
  const seen = new Set<string>([dag.name]);
  rest.forEach((value: unknown, index: number) => {
    if (value === null || value === undefined) return;
    const map = asMap(value);
    const rawName = map?.get('name');
    const label = typeof rawName === 'string' ? `sub-DAG '${rawName}'` : `document ${index + 2}`;
    const docSink = sink.child(label);
    if (!map) return docSink.plain('a sub-DAG document must be a YAML mapping');
    if (typeof rawName !== 'string') return docSink.field('name', 'a sub-DAG document must have a name');
    const problem = checkDagName(rawName);
    if (problem) return docSink.field('name', problem, rawName);
    if (seen.has(rawName)) docSink.field('name', 'duplicate DAG name in this file', rawName);
    seen.add(rawName);
    subDags.push(parseDagDocument(map, undefined, docSink));
  });
  if (sink.count > 0) return invalid();
  const warnings = [
    ...findReferenceWarnings(dag),
    ...subDags.flatMap((sub) => findReferenceWarnings(sub, `sub-DAG '${sub.name}'`)),
  ];
  return { valid: true, errors: [], warnings, dag, subDags };
}
