import type { z } from 'zod';

/**
 * A pool or a client inside a transaction: anything that runs one statement.
 * Rows come back as `unknown` and are parsed with a schema
 * ({@link parseRows}), never cast.
 */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Parses every row of a result. @throws ZodError on a row of another shape (a bug or a schema drift). */
export function parseRows<S extends z.ZodType>(schema: S, result: { rows: unknown[] }): Array<z.output<S>> {
  return result.rows.map((row) => schema.parse(row));
}

/** Parses the first row, or `undefined` when there is none. */
export function parseFirstRow<S extends z.ZodType>(schema: S, result: { rows: unknown[] }): z.output<S> | undefined {
  const row = result.rows[0];
  return row === undefined ? undefined : schema.parse(row);
}
