/**
 * The small JSON path of `output` fields (`select: .data.items[0].name`,
 * dagu-model §3) and of `${OUT.key}` references to a JSON output variable:
 * dot-separated keys and `[n]` array indexes, an optional leading `.`.
 */

/** One path step: an object key or an array index. */
type PathStep = { kind: 'key'; key: string } | { kind: 'index'; index: number };

/**
 * Splits `.a.b[0]["c d"]` into steps.
 *
 * @returns the steps, or `undefined` when the path is malformed.
 */
export function parseJsonPath(path: string): PathStep[] | undefined {
  const steps: PathStep[] = [];
  const pattern = /\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\["([^"]*)"\]/y;
  let text = path.trim();
  if (text === '.' || text === '') return steps;
  if (!text.startsWith('.') && !text.startsWith('[')) text = `.${text}`;
  pattern.lastIndex = 0;
  while (pattern.lastIndex < text.length) {
    const match = pattern.exec(text);
    if (match === null) return undefined;
    if (match[1] !== undefined) steps.push({ kind: 'key', key: match[1] });
    else if (match[2] !== undefined) steps.push({ kind: 'index', index: Number(match[2]) });
    else steps.push({ kind: 'key', key: match[3] ?? '' });
  }
  return steps;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads `path` from a decoded JSON value.
 *
 * @returns `{found: true, value}`, or `{found: false}` when the path is
 *   malformed or leads nowhere.
 */
export function selectJsonPath(root: unknown, path: string): { found: true; value: unknown } | { found: false } {
  const steps = parseJsonPath(path);
  if (steps === undefined) return { found: false };
  let current: unknown = root;
  for (const step of steps) {
    if (step.kind === 'index') {
      if (!Array.isArray(current) || step.index >= current.length) return { found: false };
      current = current[step.index];
    } else {
      if (!isRecord(current) || !Object.prototype.hasOwnProperty.call(current, step.key)) return { found: false };
      current = current[step.key];
    }
  }
  return { found: true, value: current };
}

/** A selected JSON value as text: strings as they are, anything else as compact JSON. */
export function jsonValueToText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value);
}

/** `JSON.parse` that reports failure instead of throwing. */
export function tryParseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    const value: unknown = JSON.parse(text);
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
