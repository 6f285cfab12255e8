/**
 * Options of a read action: `timeoutMs`, this call's deadline in ms (default the
 * op's `timeoutMs`, else the bus client's). A face that must answer sooner than a
 * write would wait (a `dagu_execute` wait, a completion) bounds its reads with it.
 */
export interface ReadOptions {
  readonly timeoutMs?: number;
}

/** `{timeoutMs}` for a bus call's options, or nothing (so the op's own deadline applies). */
export function timeoutOf(options: ReadOptions): { timeoutMs?: number } {
  return options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {};
}
