/**
 * Names for the parameterized statements a pool runs, so PostgreSQL parses
 * and plans each SQL text once per connection instead of on every execution
 *. pg sends a named statement's Parse only the first time a
 * connection sees it; later executions are Bind + Execute. Measured on the
 * run start path (S8, 100 starts at once): PostgreSQL's CPU per start fell
 * from 1.8 to 1.2 ms, the run insert being a large CTE whose planning cost
 * more than its execution.
 *
 * Only texts run with at least one parameter are named: a text without
 * values may hold several statements (`BEGIN; SET LOCAL …`), which cannot be
 * prepared. A text is named the second time it is seen, and only with at
 * most `maxParams` parameters, so SQL built at run time (a multi-row
 * `VALUES` list, a varying `IN` list) does not fill the names with texts that
 * may never come back, each costing PostgreSQL memory on every connection.
 * At most `max` distinct texts get a name per pool; texts past the cap run
 * unnamed, as before.
 *
 * A text whose prepared form PostgreSQL refuses because its result columns
 * changed under it (a newer release's migration altered a table this process
 * still reads: `cached plan must not change result type`) is never named
 * again. The execution that met it is retried once unnamed when its
 * connection is not inside a transaction (PostgreSQL refuses before running
 * anything); inside a transaction it fails, and the caller's transaction
 * with it, once.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly refused = new Set<string>();
  private readonly seenOnce = new Set<string>();
  private issued = 0;

  /**
   * @param max        distinct SQL texts named per pool (default 256); 0 names none
   * @param maxParams  texts with more parameters than this are never named (default 64)
   */
  constructor(
    private readonly max = 256,
    private readonly maxParams = 64,
  ) {}

  /**
   * The name `text` (run with `params` parameters) runs under, or
   * `undefined` (unnamed): the first time it is seen, past the cap, with too
   * many parameters, or once refused. Names are never reused for another
   * text: a connection that prepared `dq3` keeps it for its whole life.
   */
  nameOf(text: string, params = 1): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.issued >= this.max || params > this.maxParams || this.refused.has(text)) return undefined;
    if (!this.seenOnce.has(text)) {
      // Bounded: forgetting a text only delays its name by one more execution.
      if (this.seenOnce.size >= 4 * Math.max(1, this.max)) this.seenOnce.clear();
      this.seenOnce.add(text);
      return undefined;
    }
    this.seenOnce.delete(text);
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

/**
 * PostgreSQL's answer when a prepared statement's result columns changed
 * since it was planned: SQLSTATE 0A000 from `RevalidateCachedQuery` (the
 * routine name is not translated; the message is, under `lc_messages`).
 */
export function isStaleStatement(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err) || err.code !== '0A000') return false;
  if ('routine' in err && err.routine === 'RevalidateCachedQuery') return true;
  return (
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
    const name = names.nameOf(first, second.length);
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
  const name = names.nameOf(config.text, config.values.length);
  if (name === undefined) return { args, text: undefined };
  return { args: [{ ...config, name }, ...args.slice(1)], text: config.text };
}
