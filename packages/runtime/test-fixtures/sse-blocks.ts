/**
 * Reads a Server-Sent Events response block by block as it arrives, for
 * tests that need to see the wire (comments, event ids, `retry`) rather than
 * what an MCP client makes of it. Transport-agnostic: the caller feeds the
 * decoded text chunks of whatever HTTP client it uses (`node:http` in the
 * gateway's transport harness, `fetch` in `test/e2e/mcp-http.ts`), so both
 * share one parser and one waiting rule.
 *
 * Blocks are split on a blank line (`\n\n`, as the gateway writes them); each
 * line is `:comment`, `id:`, `data:` or `retry:`, the value trimmed; a
 * repeated field keeps its last line.
 */

/** One SSE block: a comment, or an event with optional id, data and retry. */
export interface SseBlock {
  readonly comment?: string;
  readonly id?: string;
  readonly data?: string;
  readonly retry?: string;
  /** Milliseconds since the stream opened (`startedAt`) when the block arrived. */
  readonly at: number;
}

/** Blocks read so far and a way to wait for one. */
export interface SseBlockReader {
  /** Every complete block, in arrival order (the array grows as chunks arrive). */
  readonly blocks: SseBlock[];
  /** Feeds a decoded text chunk: complete blocks are parsed and waiters are woken. */
  push(chunk: string): void;
  /** Resolves with the first block (already read or coming) that matches; rejects after `timeoutMs`. */
  next: (match: (block: SseBlock) => boolean, timeoutMs?: number) => Promise<SseBlock>;
}

/**
 * A reader for one SSE response.
 *
 * @param options.defaultTimeoutMs how long {@link SseBlockReader.next} waits when not told, ms
 * @param options.startedAt        epoch ms that `at` counts from (default: now)
 */
export function createSseBlockReader(options: { defaultTimeoutMs: number; startedAt?: number }): SseBlockReader {
  const started = options.startedAt ?? Date.now();
  const blocks: SseBlock[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  const push = (chunk: string): void => {
    buffer += chunk;
    let cut = buffer.indexOf('\n\n');
    while (cut !== -1) {
      blocks.push(parseSseBlock(buffer.slice(0, cut), Date.now() - started));
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf('\n\n');
    }
    for (const wake of [...waiters]) wake();
  };
  const next = (match: (block: SseBlock) => boolean, timeoutMs = options.defaultTimeoutMs): Promise<SseBlock> =>
    new Promise((found, fail) => {
      const check = (): void => {
        const block = blocks.find(match);
        if (block === undefined) return;
        clearTimeout(timer);
        waiters.delete(check);
        found(block);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        fail(new Error(`no matching SSE block within ${timeoutMs} ms; got ${JSON.stringify(blocks)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { blocks, push, next };
}

/** Parses one block's text (without the blank line that ended it). */
export function parseSseBlock(text: string, at: number): SseBlock {
  const block: { comment?: string; id?: string; data?: string; retry?: string; at: number } = { at };
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) block.comment = line.slice(1).trim();
    else if (line.startsWith('id:')) block.id = line.slice(3).trim();
    else if (line.startsWith('data:')) block.data = line.slice(5).trim();
    else if (line.startsWith('retry:')) block.retry = line.slice(6).trim();
  }
  return block;
}
