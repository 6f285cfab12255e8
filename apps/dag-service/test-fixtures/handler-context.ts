import { createHandlerContext, SILENT_LOGGER, type HandlerContext } from '@dagu-mcp/bus';
import type { Principal } from '@dagu-mcp/contracts';

/** The caller of every test request. */
export const TEST_PRINCIPAL: Principal = { id: 'user-1', subject: 'alice', role: 'admin', credentialType: 'api_key' };

/**
 * Runs `fn` with a real handler context (the bus's own factory) whose
 * deadline is `timeoutMs` from now, and disposes of its timer afterwards.
 *
 * @param timeoutMs - default 5000; 0 or less gives a context already past its deadline.
 * @param principal - the caller; default {@link TEST_PRINCIPAL} (admin)
 */
export async function withHandlerContext<T>(
  fn: (ctx: HandlerContext) => Promise<T>,
  timeoutMs = 5000,
  principal: Principal = TEST_PRINCIPAL,
): Promise<T> {
  const { context, dispose } = createHandlerContext({
    principal,
    deadline: Date.now() + timeoutMs,
    op: 'test',
    jobId: 'test-job',
    traceContext: {},
    logger: SILENT_LOGGER,
  });
  try {
    return await fn(context);
  } finally {
    dispose();
  }
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error: unknown) {
    return error;
  }
  throw new Error('Expected a rejection, but the promise resolved.');
}

/** Builds a small valid DAG YAML (dagu-model §3) with the given extras. */
export function dagYaml(
  opts: {
    description?: string;
    labels?: readonly string[];
    schedule?: readonly string[];
    commands?: readonly string[];
  } = {},
): string {
  const lines: string[] = [];
  if (opts.description !== undefined) lines.push(`description: ${JSON.stringify(opts.description)}`);
  if (opts.labels !== undefined)
    lines.push(`labels: [${opts.labels.map((label) => JSON.stringify(label)).join(', ')}]`);
  if (opts.schedule !== undefined)
    lines.push(`schedule: [${opts.schedule.map((cron) => JSON.stringify(cron)).join(', ')}]`);
  lines.push('steps:');
  (opts.commands ?? ['echo hello']).forEach((command, index) => {
    lines.push(`  - name: step${index + 1}`, `    run: ${JSON.stringify(command)}`);
  });
  return `${lines.join('\n')}\n`;
}
