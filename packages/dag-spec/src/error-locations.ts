/**
 * Where in the YAML text each validation error points (the console's editor marks
 * each error at its line; the `errorLocations` of the `dag.validate` reply).
 *
 * The errors are the dagu-model §4 strings of {@link parseDagSpec}; their context prefixes
 * (`sub-DAG 'x': `, `handler_on.exit: `, `step 'build': `, `steps[2]: `) and their
 * `field '<path>'` part are followed through the YAML syntax tree to the key they name. An
 * error that names no place (an empty spec, a dependency cycle of the whole DAG) gets no
 * location.
 */
import { isMap, isNode, isPair, isScalar, isSeq, LineCounter, parseAllDocuments } from 'yaml';
import { duplicateKeyOffsets } from './unique-keys';
import { prescanYaml } from './yaml-prescan';

/** One located error: `index` into the `errors` list, 1-based `line` and `column`. */
export interface ErrorLocation {
  readonly index: number;
  readonly line: number;
  readonly column: number;
}

/** A place in the tree: the node reached and the offset to report (its key when it has one). */
interface Place {
  readonly node: unknown;
  readonly offset: number;
}

const CONTEXT = /^(?:sub-DAG '([^']*)'|document (\d+)|handler_on\.([A-Za-z_]+)|step '([^']*)'|([A-Za-z_]+)\[(\d+)\]): /;
const FIELD = /^field '([^']+)'/;
/** The dependency errors name their step without quotes (dependencies.ts). */
const DEPENDS = /^step (\S+) depends on /;

/** The start offset of a node, or `undefined` for a value that is not a node. */
function startOf(node: unknown): number | undefined {
  return isNode(node) ? node.range?.[0] : undefined;
}

/** The pair of `map` under `key`, as a place at its key; `undefined` when absent. */
function child(node: unknown, key: string): Place | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (isScalar(pair.key) && String(pair.key.value) === key)
        return { node: pair.value, offset: startOf(pair.key) ?? 0 };
    }
    return undefined;
  }
  if (isSeq(node) && /^\d+$/.test(key)) {
    const item = node.items[Number(key)];
    const offset = startOf(item);
    return offset === undefined ? undefined : { node: item, offset };
  }
  return undefined;
}

/** The step named `name` among `steps` (a list of maps with `name`/`id`, or a map of names), searched depth-first. */
function findStep(node: unknown, name: string): Place | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair) || !isScalar(pair.key)) continue;
      const key = String(pair.key.value);
      if (key === 'steps' && isMap(pair.value)) {
        const byKey = child(pair.value, name);
        if (byKey !== undefined) return byKey;
      }
      if ((key === 'name' || key === 'id') && isScalar(pair.value) && String(pair.value.value) === name)
        return { node, offset: startOf(node) ?? 0 };
    }
    for (const pair of node.items) {
      const found = findStep(pair.value, name);
      if (found !== undefined) return found;
    }
  } else if (isSeq(node)) {
    for (const item of node.items) {
      const found = findStep(item, name);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** Walks a field path (`foreach.collect.x`, `env[2]`, `steps.build`) as far as it goes. */
function walkField(from: Place, path: string): Place {
  let place = from;
  for (const part of path.split(/\.|\[(\d+)\]/).filter((p): p is string => p !== undefined && p !== '')) {
    const next = child(place.node, part);
    if (next === undefined) break;
    place = next;
  }
  return place;
}

/**
 * The locations of `errors` in `yamlText` (errors of the first document are looked up in it,
 * `sub-DAG 'x'` errors in the document named `x`). `invalid YAML` errors take the YAML
 * parser's own positions, in order.
 *
 * @returns one entry per error that names a place, in the order of `errors`; never throws
 */
export function locateErrors(yamlText: string, errors: readonly string[]): ErrorLocation[] {
  // A text past the pre-scan's bounds is never parsed (parseDagSpec refused it unparsed too).
  const problem = prescanYaml(yamlText);
  if (problem !== undefined) {
    const index = errors.findIndex((error) => error.endsWith(problem.message));
    return index === -1 ? [] : [{ index, line: problem.line, column: problem.column }];
  }
  const lineCounter = new LineCounter();
  let documents: ReturnType<typeof parseAllDocuments>;
  try {
    documents = parseAllDocuments(yamlText, { lineCounter, merge: true, uniqueKeys: false });
  } catch {
    return [];
  }
  if (!Array.isArray(documents)) return [];
  // The order of parseDagSpec: the library's errors, else the duplicate keys (unique-keys.ts).
  let syntaxOffsets = documents.flatMap((doc) => doc.errors.map((e) => e.pos[0]));
  if (syntaxOffsets.length === 0) syntaxOffsets = documents.flatMap((doc) => duplicateKeyOffsets(doc));
  const out: ErrorLocation[] = [];
  let syntaxIndex = 0;
  errors.forEach((error, index) => {
    let offset: number | undefined;
    if (error.startsWith('invalid YAML:')) offset = syntaxOffsets[syntaxIndex++];
    else
      offset = locateOne(
        documents.map((d) => d.contents),
        error,
      );
    if (offset === undefined) return;
    const { line, col } = lineCounter.linePos(offset);
    out.push({ index, line, column: col });
  });
  return out;
}

/** The offset one semantic error points at, or `undefined`. */
function locateOne(roots: readonly unknown[], error: string): number | undefined {
  let rest = error;
  let place: Place | undefined = { node: roots[0], offset: startOf(roots[0]) ?? 0 };
  let moved = false;
  for (let match = CONTEXT.exec(rest); match !== null && place !== undefined; match = CONTEXT.exec(rest)) {
    rest = rest.slice(match[0].length);
    moved = true;
    const [, subDag, docNumber, handler, step, listField, listIndex] = match;
    if (subDag !== undefined) {
      const root = roots.find((r) => isScalar(child(r, 'name')?.node) && String(nameOf(r)) === subDag);
      place = root === undefined ? undefined : { node: root, offset: startOf(root) ?? 0 };
    } else if (docNumber !== undefined) {
      const root = roots[Number(docNumber) - 1];
      place = root === undefined ? undefined : { node: root, offset: startOf(root) ?? 0 };
    } else if (handler !== undefined) {
      const handlers = child(place.node, 'handler_on');
      place = handlers === undefined ? undefined : (child(handlers.node, handler) ?? handlers);
    } else if (step !== undefined) {
      place = findStep(place.node, step);
    } else if (listField !== undefined && listIndex !== undefined) {
      const list = child(place.node, listField);
      place = list === undefined ? undefined : child(list.node, listIndex);
    }
  }
  if (place === undefined) return undefined;
  const depends = DEPENDS.exec(rest);
  if (depends?.[1] !== undefined) {
    const step = findStep(place.node, depends[1]);
    return step === undefined ? undefined : walkField(step, 'depends').offset;
  }
  const field = FIELD.exec(rest);
  if (field?.[1] !== undefined) return walkField(place, field[1]).offset;
  return moved ? place.offset : undefined;
}

/** The scalar value of a map's `name`, or `undefined`. */
function nameOf(node: unknown): unknown {
  const name = child(node, 'name')?.node;
  return isScalar(name) ? name.value : undefined;
}
