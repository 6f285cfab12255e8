import { DaguError } from './errors';

/**
 * Validators for the names and ids that appear inside `dagu://` resource URIs
 * (dagu-model §2, spec 020 "Resource URI Model"). They check the *decoded*
 * value: escaping is the URI codec's business (`uri-escape.ts`).
 *
 * The tool layer reuses them for target-mode fields, where a failure is
 * `invalid_tool_input` on that field; inside a URI a failure is
 * `invalid_resource_uri` on `uri`.
 */

/** Longest DAG name, in characters (dagu-model §2). */
export const DAG_NAME_MAX_LENGTH = 40;
/** Longest DAG-run id, in characters (dagu-model §2). */
export const DAG_RUN_ID_MAX_LENGTH = 64;
/** Longest step name, in Unicode code points (dagu-model §2). */
export const STEP_NAME_MAX_LENGTH = 255;

const DAG_NAME_PATTERN = /^[a-zA-Z0-9_.-]+$/;
const DAG_RUN_ID_PATTERN = /^[-a-zA-Z0-9_]+$/;
const WIKI_SEGMENT_PATTERN = /^[A-Za-z0-9._-]+$/;
/** An unpaired UTF-16 surrogate: such a string cannot be UTF-8 percent-encoded. */
const LONE_SURROGATE = /\p{Cs}/u;
/** A foreach item path ends in the item index: `3`, or `<foreachParent>.3` (spec 021 `item`). */
const FOREACH_ITEM_PATTERN = /^(?:[\s\S]+\.)?[0-9]+$/;

/** True when `text` is well-formed Unicode (no lone surrogates). */
function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Length of `text` in Unicode code points, not UTF-16 units. */
function codePointLength(text: string): number {
  return Array.from(text).length;
}

/**
 * DAG name: `^[a-zA-Z0-9_.-]+$`, at most 40 characters, not `.` or `..`
 * (dagu-model §2).
 */
export function isValidDagName(name: string): boolean {
  return name.length <= DAG_NAME_MAX_LENGTH && DAG_NAME_PATTERN.test(name) && name !== '.' && name !== '..';
}

/** DAG-run id (root or child `subRunId`): `^[-a-zA-Z0-9_]+$`, at most 64 characters (dagu-model §2). */
export function isValidDagRunId(id: string): boolean {
  return id.length <= DAG_RUN_ID_MAX_LENGTH && DAG_RUN_ID_PATTERN.test(id);
}

/**
 * Step name (also a foreach `bodyStepName`): any characters, 1 to 255 code
 * points, well-formed Unicode (dagu-model §2). Reserved URI characters are
 * allowed; the codec percent-encodes them.
 */
export function isValidStepName(name: string): boolean {
  const length = codePointLength(name);
  return length >= 1 && length <= STEP_NAME_MAX_LENGTH && isWellFormed(name);
}

/** Wiki workspace names (issue "wiki-service": `^[a-z0-9][a-z0-9_-]{0,63}$`). */
const WIKI_WORKSPACE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * Wiki workspace: `^[a-z0-9][a-z0-9_-]{0,63}$` (the wiki issue's rule; it
 * also travels as a `workspace=<name>` DAG label, dagu-model §10). `all` is
 * valid here; it is refused only as a page's workspace (spec 021
 * `workspace`), which the URI parser checks.
 */
export function isValidWikiWorkspace(workspace: string): boolean {
  return WIKI_WORKSPACE_PATTERN.test(workspace);
}

/**
 * Wiki page path (dagu-model §2): segments of `[A-Za-z0-9._-]` joined by `/`;
 * no empty segment, so no leading, trailing or doubled `/`; no `..` segment.
 * Decision: a `.` segment is refused too, as it names no page of its own, and so is
 * a path ending in `.md` (pages are stored without the extension).
 */
export function isValidWikiPath(path: string): boolean {
  // Pages are stored without the `.md` extension (dagu-model §2), so a path that carries it names no page.
  if (path.toLowerCase().endsWith('.md')) return false;
  return hasValidWikiSegments(path);
}

/** Every `/`-separated segment matches `[A-Za-z0-9._-]+` and is neither `.` nor `..`. */
function hasValidWikiSegments(path: string): boolean {
  return path.split('/').every((segment) => WIKI_SEGMENT_PATTERN.test(segment) && segment !== '.' && segment !== '..');
}

/**
 * Wiki path prefix for the `wiki` `prefix` query parameter (spec 021 "Query
 * handling"): a wiki path, optionally followed by one trailing `/` (a folder),
 * or a partial last segment such as `guides/in`. The segment rules above
 * apply; the `.md` ending does not, because a prefix is not a page: `notes.md`
 * begins `notes.mdx`, and `a.md/` is the folder of the valid page `a.md/b`.
 */
export function isValidWikiPathPrefix(prefix: string): boolean {
  const body = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return body.length > 0 && hasValidWikiSegments(body);
}

/**
 * Reference topic: any non-empty, well-formed string. Whether the topic exists
 * is checked by the reader (`resource_not_found`), not here.
 */
export function isValidReferenceTopic(topic: string): boolean {
  return topic.length > 0 && isWellFormed(topic);
}

/**
 * Foreach item path (spec 021 `item`): the item index (`3`), or a nested
 * item's `foreachParent` followed by `.` and the index (`<parent>.3`). The
 * parent part is opaque; only the trailing decimal index is checked.
 */
export function isValidForeachItem(item: string): boolean {
  return FOREACH_ITEM_PATTERN.test(item) && isWellFormed(item);
}

/**
 * `invalid_resource_uri` on field `uri` (spec 020 "Errors", dagu-model §10);
 * `details.part` names the URI part at fault (`host`, `path`, `name`, …).
 */
export function invalidResourceUri(message: string, part?: string): DaguError {
  return new DaguError('invalid_resource_uri', message, {
    field: 'uri',
    ...(part === undefined ? {} : { details: { part } }),
  });
}

/** Throws `invalid_resource_uri` naming `part` (e.g. `stepName`) unless `valid`. */
export function requireValidUriPart(valid: boolean, part: string, what: string): void {
  if (!valid) throw invalidResourceUri(`Resource URI has an invalid ${what}.`, part);
}
