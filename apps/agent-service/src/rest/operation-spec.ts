import { DaguError, issueMessage } from '@dagu-mcp/contracts';
import { InputValidators, OperationVersionSpecSchema, type OperationVersionSpec } from '@dagu-mcp/rest-operations';

/** One compiler for publish-time checks; calls keep their own compiled validators (operation-call.ts). */
const checker = new InputValidators(1);

/**
 * An operation version's spec, checked: the shape of
 * `@dagu-mcp/rest-operations` (flat input, path placeholders ↔ path arguments,
 * no `Host`/`Authorization`/`Cookie` from input, retries only when idempotent)
 * and an input schema that compiles as JSON Schema 2020-12.
 *
 * @throws DaguError `invalid_request` with `field` = `spec.<path of the first problem>`
 */
export function parseOperationSpec(spec: unknown): OperationVersionSpec {
  const parsed = OperationVersionSpecSchema.safeParse(spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = ['spec', ...(issue?.path ?? []).map(String)].join('.');
    const message = issue === undefined ? 'invalid' : issueMessage(issue, spec);
    throw new DaguError('invalid_request', `${field}: ${message}`, { field });
  }
  try {
    checker.assertCompiles(parsed.data.inputSchema);
  } catch (err) {
    throw new DaguError(
      'invalid_request',
      `spec.inputSchema: not a valid JSON Schema (${err instanceof Error ? err.message.slice(0, 300) : 'invalid'})`,
      { field: 'spec.inputSchema' },
    );
  }
  return parsed.data;
}
