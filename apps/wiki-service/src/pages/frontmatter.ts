import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { DaguError } from '@dagu-mcp/contracts';
import { prescanYaml, type YamlTextBounds } from '@dagu-mcp/dag-spec';
import { pageNameOf } from './page-keys';

/**
 * Page facts read from a page's Markdown when it is written (dagu-model §7:
 * "Markdown with optional YAML frontmatter (`title`, `tags`)").
 *
 * Frontmatter is a block at the very start of the content: a line `---`,
 * YAML, and a closing line `---` (or `...`). A leading BOM is skipped. A
 * first line `---` without a closing fence is not frontmatter (a Markdown
 * thematic break). The content itself is always stored verbatim.
 */

/** What a write derives from the content. */
export interface PageFacts {
  /** Frontmatter `title`, else the first level-1 ATX heading (`# …`), else the page name. */
  title: string;
  /** Frontmatter `tags`, trimmed, de-duplicated, in order; `[]` when absent. */
  tags: string[];
}

/** Longest title kept, in characters. */
export const MAX_TITLE_LENGTH = 500;
/** Most tags a page may carry, and the longest tag in characters. */
export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 100;

/**
 * Bounds of the frontmatter's YAML, checked by the pre-scan before it is parsed (issue
 * 42): 256 KiB, 64 levels, 5 000 values. Frontmatter holds a title and some tags; the
 * values bound also keeps the `yaml` library's duplicate-key check (each key compared
 * with every earlier one) within milliseconds, so it is parsed on the service's thread.
 */
export const FRONTMATTER_BOUNDS: YamlTextBounds = { maxBytes: 256 * 1024, maxDepth: 64, maxNodes: 5000 };

const OPEN_FENCE = /^---[ \t]*$/;
const CLOSE_FENCE = /^(?:---|\.\.\.)[ \t]*$/;
const H1 = /^#[ \t]+(.+?)[ \t]*#*[ \t]*$/;

function invalidContent(message: string): DaguError {
  return new DaguError('invalid_tool_input', message, { field: 'content' });
}

/** Splits content into its frontmatter YAML (when there is a block) and the Markdown body. */
export function splitFrontmatter(content: string): { yaml: string | undefined; body: string } {
  const text = content.startsWith('\uFEFF') ? content.slice(1) : content;
  const lines = text.split('\n');
  const first = lines[0];
  if (first === undefined || !OPEN_FENCE.test(first.replace(/\r$/, ''))) return { yaml: undefined, body: text };
  for (let i = 1; i < lines.length; i += 1) {
    const line = (lines[i] ?? '').replace(/\r$/, '');
    if (CLOSE_FENCE.test(line)) {
      return { yaml: lines.slice(1, i).join('\n'), body: lines.slice(i + 1).join('\n') };
    }
  }
  return { yaml: undefined, body: text };
}

/** A scalar's text: strings as they are, numbers and booleans spelled out; anything else is undefined. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function readTitle(node: unknown): string | undefined {
  if (node === undefined || node === null) return undefined;
  const text = isScalar(node) ? scalarText(node.value) : undefined;
  if (text === undefined) throw invalidContent('The frontmatter title must be a string.');
  const title = text.trim();
  if (title.length > MAX_TITLE_LENGTH)
    throw invalidContent(`The frontmatter title must be at most ${MAX_TITLE_LENGTH} characters.`);
  return title === '' ? undefined : title;
}

function readTags(node: unknown): string[] {
  if (node === undefined || node === null) return [];
  let raw: string[];
  if (isSeq(node)) {
    raw = node.items.map((item) => {
      const text = isScalar(item) ? scalarText(item.value) : undefined;
      if (text === undefined) throw invalidContent('Each frontmatter tag must be a string.');
      return text;
    });
  } else if (isScalar(node) && typeof node.value === 'string') {
    raw = node.value.split(',');
  } else if (isScalar(node) && node.value === null) {
    raw = [];
  } else {
    throw invalidContent('The frontmatter tags must be a list of strings or a comma-separated string.');
  }
  const tags = [...new Set(raw.map((tag) => tag.trim()).filter((tag) => tag !== ''))];
  if (tags.length > MAX_TAGS) throw invalidContent(`A page may carry at most ${MAX_TAGS} tags.`);
  if (tags.some((tag) => tag.length > MAX_TAG_LENGTH)) {
    throw invalidContent(`A frontmatter tag must be at most ${MAX_TAG_LENGTH} characters.`);
  }
  return tags;
}

/** The first level-1 ATX heading of the body, outside fenced code blocks. */
function firstHeading(body: string): string | undefined {
  let fenced = false;
  for (const rawLine of body.split('\n')) {
    const line = rawLine.replace(/\r$/, '');
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = H1.exec(line)?.[1]?.trim();
    if (heading !== undefined && heading !== '') return heading.slice(0, MAX_TITLE_LENGTH);
  }
  return undefined;
}

/** Refuses frontmatter past {@link FRONTMATTER_BOUNDS}, before the `yaml` library reads it. */
function assertWithinBounds(yaml: string): void {
  const problem = prescanYaml(yaml, FRONTMATTER_BOUNDS);
  if (problem === undefined) return;
  // The frontmatter starts on the page's second line, after its `---` fence.
  const where = `at line ${problem.line + 1}, column ${problem.column} of the page`;
  const { maxBytes, maxDepth, maxNodes } = FRONTMATTER_BOUNDS;
  const sentence =
    problem.bound === 'bytes'
      ? `is larger than ${maxBytes} bytes (its size is bounded)`
      : problem.bound === 'depth'
        ? `nests collections deeper than ${maxDepth} levels ${where} (the nesting depth is bounded)`
        : `holds more than ${maxNodes} values ${where} (the number of values is bounded)`;
  throw invalidContent(`The page frontmatter ${sentence}.`);
}

/**
 * Reads a page's title and tags from its content.
 *
 * @param path the page path, whose last segment is the title of last resort
 * @throws DaguError `invalid_tool_input` on field `content` when the
 *   frontmatter passes {@link FRONTMATTER_BOUNDS} (`The page frontmatter nests
 *   collections deeper than 64 levels at line 2, column 9 of the page (the nesting depth
 *   is bounded).`), is not YAML, not a mapping, or has a `title` that is not a
 *   string or `tags` that are not strings (lengths: {@link MAX_TITLE_LENGTH},
 *   {@link MAX_TAGS}, {@link MAX_TAG_LENGTH})
 */
export function readPageFacts(path: string, content: string): PageFacts {
  const { yaml, body } = splitFrontmatter(content);
  let title: string | undefined;
  let tags: string[] = [];
  if (yaml !== undefined && yaml.trim() !== '') {
    assertWithinBounds(yaml);
    const doc = parseDocument(yaml, { prettyErrors: false });
    const error = doc.errors[0];
    if (error !== undefined) throw invalidContent(`The page frontmatter is not valid YAML: ${error.message}`);
    const root = doc.contents;
    if (root !== null && !isMap(root)) throw invalidContent('The page frontmatter must be a YAML mapping.');
    if (root !== null) {
      title = readTitle(root.get('title', true));
      tags = readTags(root.get('tags', true));
    }
  }
  return { title: title ?? firstHeading(body) ?? pageNameOf(path), tags };
}
