import { RE2JS } from 're2js';

/**
 * Regular expressions written by DAG authors — `re:` in preconditions and
 * `repeat_policy` conditions (`expected`), and in `continue_on.output` —
 * compiled by RE2JS, a linear-time engine: matching costs time proportional to the line, whatever the
 * pattern, so a pattern such as `(a+)+$` cannot stall the engine's event loop
 * on a long line as JavaScript's backtracking `RegExp` does. The syntax is
 * RE2's, the syntax of Dagu's own Go `regexp`; what RE2 leaves out
 * (lookaround, backreferences) is a compile error.
 */

/** Whether a pattern matches somewhere in a line. */
export type LineTest = (line: string) => boolean;

/**
 * Compiles an author's pattern (without its `re:` prefix).
 *
 * @returns the line test, or `{error}` with the engine's reason for a pattern
 *   it refuses.
 */
export function compileAuthorRegex(pattern: string): LineTest | { error: string } {
  try {
    const compiled = RE2JS.compile(pattern);
    return (line: string) => compiled.matcher(line).find();
  } catch (error: unknown) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
