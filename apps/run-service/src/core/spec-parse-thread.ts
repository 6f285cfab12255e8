import { parentPort } from 'node:worker_threads';
import { parseDagSpec } from '@dagu-mcp/dag-spec';

/**
 * Thread program of large DAG-spec parses (dag-spec-threads.ts): parses one
 * `{name, spec}` per message off run-service's event loop and answers `{ok: true, result,
 * weight}` (`parseDagSpec`'s result and the memo weight of it: key plus result as JSON, in
 * characters, measured here so the event loop does not stringify it) or `{ok: false,
 * message}` when it threw. The thread stays for the next job.
 */
parentPort?.on('message', (message: { name?: unknown; spec?: unknown }) => {
  const { name, spec } = message;
  if (typeof name !== 'string' || typeof spec !== 'string') {
    parentPort?.postMessage({ ok: false, message: 'malformed parse job' });
    return;
  }
  try {
    const result = parseDagSpec(spec, { name });
    const weight = spec.length + name.length + 1 + JSON.stringify(result).length;
    parentPort?.postMessage({ ok: true, result, weight });
  } catch (error) {
    parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
