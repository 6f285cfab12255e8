/**
 * Small helpers to build the WHERE clauses of the DAG queries with bound
 * parameters only (no value is ever spliced into SQL text).
 */

/**
 * The `ILIKE` pattern matching any text that contains `text`: `%`, `_` and
 * the escape character `\` in `text` are escaped, so they match themselves.
 * Use with PostgreSQL's default escape character (`\`).
 *
 * Shape: `50%_off` → `%50\%\_off%`.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/**
 * Accumulates `AND`-joined conditions and their parameters.
 *
 * ```ts
 * const where = new SqlConditions();
 * where.add((p) => `name ILIKE ${p}`, containsPattern('report'));
 * pool.query(`SELECT … FROM dags ${where.clause()}`, where.values);
 * ```
 */
export class SqlConditions {
  private readonly conditions: string[] = [];
  /** Parameter values, `$1` first. */
  readonly values: unknown[] = [];

  /**
   * Adds a condition with one parameter.
   *
   * @param render - receives the placeholder (`$n`) of `value` and returns the condition.
   */
  add(render: (placeholder: string) => string, value: unknown): this {
    this.values.push(value);
    this.conditions.push(render(`$${this.values.length}`));
    return this;
  }

  /** Adds a condition without parameters (a constant SQL text, never user input). */
  addConstant(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** Binds one more parameter (e.g. a LIMIT) and returns its placeholder. */
  bind(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** `WHERE a AND b`, or the empty string when no condition was added. */
  clause(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }
}
