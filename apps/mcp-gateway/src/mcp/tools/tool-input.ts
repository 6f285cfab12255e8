import { DaguError } from '@dagu-mcp/contracts';

/** A tool's arguments after the common 021/022/036 parsing rules. */
export type ToolArgs = Record<string, unknown>;

/**
 * Checks that `args` is a JSON object (021/022/036: "Tool input is a JSON
 * object"). `undefined` (no `arguments` at all) counts as `{}`.
 *
 * @throws DaguError `invalid_tool_input` for arrays, strings, numbers, null
 */
export function requireObject(args: unknown): ToolArgs {
  if (args === undefined) return {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new DaguError('invalid_tool_input', 'Tool input must be a JSON object.');
  }
  return Object.fromEntries(Object.entries(args));
}

/**
 * Fails on the first unknown field, alphabetically (036 §Parsing; 021 and 022
 * require `field` = the unknown name).
 */
export function rejectUnknownFields(args: ToolArgs, known: ReadonlySet<string>): void {
  const unknown = Object.keys(args)
    .filter((k) => !known.has(k))
    .sort();
  const first = unknown[0];
  if (first !== undefined) {
    throw new DaguError('invalid_tool_input', `Unknown field: ${first}.`, { field: first });
  }
}

/**
 * Reads a string field: `null`/absent → undefined; non-string → error on that
 * field; trimmed unless `keepAsIs`; empty after trimming → undefined.
 */
export function readString(args: ToolArgs, field: string, opts: { keepAsIs?: boolean } = {}): string | undefined {
  const value = args[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new DaguError('invalid_tool_input', `The ${field} field must be a string.`, { field });
  }
  const effective = opts.keepAsIs ? value : value.trim();
  return effective === '' ? undefined : effective;
}

/** Reads an integer field (`null`/absent → undefined; anything but an integer → error on that field). */
export function readInteger(args: ToolArgs, field: string): number | undefined {
  const value = args[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new DaguError('invalid_tool_input', `The ${field} field must be an integer.`, { field });
  }
  return value;
}

/** Reads a boolean field (`null`/absent → undefined). */
export function readBoolean(args: ToolArgs, field: string): boolean | undefined {
  const value = args[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') {
    throw new DaguError('invalid_tool_input', `The ${field} field must be a boolean.`, { field });
  }
  return value;
}
