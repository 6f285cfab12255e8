import type { z } from 'zod';

/**
 * Where a schema first refuses a value: the dotted path of its first issue (`''` for the
 * value itself), or `null` when the value parses. The contract tests' one way to say which
 * field a schema names.
 */
export function firstErrorPath(schema: z.ZodType, value: unknown): string | null {
  const result = schema.safeParse(value);
  return result.success ? null : (result.error.issues[0]?.path.join('.') ?? '');
}
