import { parentPort } from 'node:worker_threads';
import { validateDagChange } from './dag-validation';

/**
 * Worker-thread entry of large DAG validations (`spec-parsers.ts`): validates one
 * `{name, spec}` per message off dag-service's event loop and answers
 * `{ok: true, check}` (the `DagChangeCheck` of `validateDagChange`) or `{ok: false,
 * message}` when it threw (a name that breaks dagu-model §2 is checked before a job is
 * sent, so this is not expected). The thread stays for the next job.
 */
parentPort?.on('message', (message: unknown) => {
  const name: unknown = typeof message === 'object' && message !== null && 'name' in message ? message.name : undefined;
  const spec: unknown = typeof message === 'object' && message !== null && 'spec' in message ? message.spec : undefined;
  if (typeof name !== 'string' || typeof spec !== 'string') {
    parentPort?.postMessage({ ok: false, message: 'malformed validation job' });
    return;
  }
  try {
    parentPort?.postMessage({ ok: true, check: validateDagChange(name, spec) });
  } catch (error) {
    parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
