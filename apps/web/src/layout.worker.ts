import { layoutGraph } from './layout';
import type { LayoutInput } from './layout-types';

/**
 * The graph layout off the page's thread (a 200-step run page is ready before its
 * graph). Each message `{id, input}` is answered `{id, layout}` or `{id, error}`.
 */

/** A layout request as the page sends it (checked: a worker trusts nothing it is sent). */
function isRequest(value: unknown): value is { id: number; input: LayoutInput } {
  if (typeof value !== 'object' || value === null || !('id' in value) || !('input' in value)) return false;
  const { id, input } = value;
  return (
    typeof id === 'number' &&
    typeof input === 'object' &&
    input !== null &&
    'nodes' in input &&
    Array.isArray(input.nodes)
  );
}

self.addEventListener('message', (event: MessageEvent<unknown>) => {
  if (!isRequest(event.data)) return;
  const { id, input } = event.data;
  try {
    self.postMessage({ id, layout: layoutGraph(input) });
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
