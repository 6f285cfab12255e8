/**
 * A `tools/call` result for a client of 2025-03-26, which has no
 * `structuredContent` (mcp-revisions §1, *ours*): the structured result's JSON
 * is added as a text item unless a text item already holds exactly that JSON.
 * Results without `structuredContent` are returned unchanged; later revisions
 * never get this (they keep the specs' exact texts).
 */
export function withStructuredText(result: Record<string, unknown>): Record<string, unknown> {
  const structured = result.structuredContent;
  if (structured === undefined || structured === null) return result;
  const json = JSON.stringify(structured);
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const present = content.some(
    (item) =>
      typeof item === 'object' &&
      item !== null &&
      (item as { type?: unknown }).type === 'text' &&
      (item as { text?: unknown }).text === json,
  );
  return present ? result : { ...result, content: [...content, { type: 'text', text: json }] };
}
