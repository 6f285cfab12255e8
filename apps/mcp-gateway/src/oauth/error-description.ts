/**
 * OAuth error descriptions as one readable sentence (RFC 6749 §5.2 `error_description`
 * is "human-readable ASCII text"). The MCP SDK's handlers put a zod validation dump there (a
 * JSON array of issues, sometimes after `ZodError: `) when a request's parameters do not parse;
 * that becomes a sentence naming each parameter. Any other description is kept, with a capital
 * first letter and a closing period.
 */

/** One zod issue as the SDK's dump carries it. */
interface DumpedIssue {
  readonly path: readonly unknown[];
  readonly message: string;
}

/**
 * `description` as one sentence: a validation dump becomes "The request was refused: the
 * parameter code_verifier is missing; the parameter resource is invalid (invalid URL)."; any
 * other text is sentence-cased.
 *
 * @param description - an `error_description` as a handler wrote it
 * @returns one line, at most 300 characters
 */
export function readableErrorDescription(description: string): string {
  const issues = dumpedIssues(description);
  const text =
    issues === undefined
      ? description.replace(/\s+/g, ' ').trim()
      : `The request was refused: ${issues.map(phrase).join('; ')}`;
  const capital = text.charAt(0).toUpperCase() + text.slice(1);
  const bounded = capital.length > 299 ? `${capital.slice(0, 296)}…` : capital;
  return /[.!?…]$/.test(bounded) ? bounded : `${bounded}.`;
}

function phrase(issue: DumpedIssue): string {
  const name = issue.path.length === 0 ? 'the request' : `the parameter ${issue.path.map((p) => String(p)).join('.')}`;
  if (/received undefined$/.test(issue.message)) return `${name} is missing`;
  const reason = issue.message.charAt(0).toLowerCase() + issue.message.slice(1);
  return `${name} is invalid (${reason.replace(/\s+/g, ' ').replace(/"/g, '')})`;
}

/** The issues of a zod dump, or `undefined` when `description` is not one. */
function dumpedIssues(description: string): DumpedIssue[] | undefined {
  const json = description.replace(/^ZodError:\s*/, '').trim();
  if (!json.startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  const items: unknown[] = parsed;
  const issues: DumpedIssue[] = [];
  for (const item of items) {
    if (typeof item !== 'object' || item === null) return undefined;
    const path: unknown = 'path' in item ? item.path : undefined;
    const message: unknown = 'message' in item ? item.message : undefined;
    if (!Array.isArray(path) || typeof message !== 'string') return undefined;
    issues.push({ path, message });
  }
  return issues;
}
