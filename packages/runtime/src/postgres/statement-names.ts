/**
 * Names for the parameterized statements a pool runs, so PostgreSQL parses
 * and plans each SQL text once per connection instead of on every execution
 * (issue 28). pg sends a named statement's Parse only the first time a
 * connection sees it; later executions are Bind + Execute. Measured on the
 * run start path (S8, 100 starts at once): PostgreSQL's CPU per start fell
 * from 1.8 to 1.2 ms, the run insert being a large CTE whose planning cost
 * more than its execution.
 *
 * Only texts run with at least one parameter are named: a text without
 * values may hold several statements (`BEGIN; SET LOCAL …`), which cannot be
 * prepared. At most `max` distinct texts get a name per pool, so SQL built
 * at run time (a varying `IN` list) cannot grow every connection's
 * statement cache without bound; texts past the cap run unnamed, as before.
 *
 * A text whose prepared form PostgreSQL refuses because its result columns
 * changed under it (a migration of a newer release altered a table this
 * process still reads: `cached plan must not change result type`) is never
 * named again; the one execution that met the change fails as any query
 * racing a migration could, and the next runs unnamed.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly refused = new Set<string>();
  private issued = 0;

  /**
   * @param max  distinct SQL texts named per pool (default 256); 0 names none
   */
  constructor(private readonly max = 256) {}

  /**
   * The name `text` runs under, or `undefined` (unnamed) when the cap is
   * reached or the text was refused. Names are never reused for another
   * text: a connection that prepared `dq3` keeps it for its whole life.
   */
  nameOf(text: string): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.issued >= this.max || this.refused.has(text)) return undefined;
    this.issued += 1;
    const name = `dq${this.issued}`;
    this.names.set(text, name);
    return name;
  }

  /** `text` runs unnamed from now on (its prepared form went stale). */
  refuse(text: string): void {
    this.names.delete(text);
    this.refused.add(text);
  }

  /** Distinct texts named so far (tests, metrics). */
  get size(): number {
    return this.names.size;
  }
}

/** PostgreSQL's answer when a prepared statement's result columns changed since it was planned. */
export function isStaleStatement(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    err.code === '0A000' &&
    'message' in err &&
    typeof err.message === 'string' &&
    err.message.includes('cached plan must not change result type')
  );
}

/**
 * The arguments of a `client.query(...)` call with a statement name added,
 * and the SQL text it names (to refuse if it goes stale); `undefined` text
 * when the call is left as it was. Named: `(text, values[≥1], cb?)` and
 * `({ text, values[≥1] }, cb?)` without a name of their own; left alone:
 * texts without values, configs that already carry a name, submittables
 * (cursors, streams).
 */
export function withStatementName(
  args: unknown[],
  names: StatementNames,
): { args: unknown[]; text: string | undefined } {
  const [first, second] = args;
  if (typeof first === 'string') {
    if (!Array.isArray(second) || second.length === 0) return { args, text: undefined };
    const name = names.nameOf(first);
    if (name === undefined) return { args, text: undefined };
    return { args: [{ name, text: first, values: second }, ...args.slice(2)], text: first };
  }
  if (typeof first !== 'object' || first === null) return { args, text: undefined };
  const config = first as { text?: unknown; values?: unknown; name?: unknown; submit?: unknown };
  if (
    typeof config.text !== 'string' ||
    config.name !== undefined ||
    typeof config.submit === 'function' ||
    !Array.isArray(config.values) ||
    config.values.length === 0
  )
    return { args, text: undefined };
  const name = names.nameOf(config.text);
  if (name === undefined) return { args, text: undefined };
  return { args: [{ ...config, name }, ...args.slice(1)], text: config.text };
}
