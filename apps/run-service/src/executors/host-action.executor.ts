import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HostAction } from '@dagu-mcp/dag-spec';
import type { RunContext, StepExecInput, StepExecutor, StepExecResult } from '../core/run-types';
import { interpolate } from '../core/interpolate';
import { runProcess } from '../process/process-runner';
import { resolveHostActionWith } from './host-action-values';

/**
 * Host action steps (dagu-actions §1.1, §1.3, §1.6–1.8): `jq.filter`,
 * `template.render` and `file.*` run in a helper process
 * (`actions/action-main.js`, started with run-service's own Node binary)
 * through the step launcher — as the run's uid, in the step's working
 * directory, with the run's limits, exactly like a shell step; never inside
 * run-service. Its stdout is the step's stdout; on failure its last stderr
 * line is the step's `error`. The resolved `with` map travels in a 0600 file
 * of the attempt's scratch directory (not on the command line, where `ps`
 * would show it), removed after the try.
 *
 * `mcp.call` (§1.9) names a server of `RUN_MCP_SERVERS` (or a `url`); the
 * entry's headers are resolved here against the step's environment (runtime
 * profile secrets) and reach only the helper's 0600 file, never a log.
 *
 * `docker.run` / `container.run` validate but cannot run: this server has no
 * container engine, so the step fails with {@link NO_CONTAINER_ENGINE}.
 */

/** The error of a container step (dagu-actions §1.6; docs/decisions.md "Dagu's built-in actions"). */
export const NO_CONTAINER_ENGINE =
  'no container engine: this server runs steps without Docker or Podman, so container steps cannot run';

/**
 * The helper's entry file (compiled `actions/action-main.ts`): beside this
 * module in `dist/`; from the TypeScript sources (tests run in place), the
 * built one in `dist/` (built before tests run).
 */
export function actionHelperPath(): string {
  const beside = join(__dirname, '..', 'actions', 'action-main.js');
  return existsSync(beside) ? beside : join(__dirname, '..', '..', 'dist', 'actions', 'action-main.js');
}

function failed(error: string, onStderr: (line: string) => void): StepExecResult {
  onStderr(error);
  return { ok: false, exitCode: 1, error, timedOut: false, aborted: false };
}

/** The container actions' run-time checks, then the no-engine failure. */
function containerFailure(action: HostAction): string {
  const w = action.with;
  if (w.exec !== undefined && w.image !== undefined && w.container_name === undefined)
    return `${action.type}: with.exec needs with.container_name (exec mode runs in an existing container)`;
  return `${action.type}: ${NO_CONTAINER_ENGINE}`;
}

/**
 * Runs the action helper for one try: writes `{action, with, host}` to a 0600
 * file of the scratch directory (given to the run's uid), starts the helper
 * through the step launcher in the step's directory with its environment,
 * and maps the outcome (the helper's last stderr line is the `error`).
 *
 * @param host run-service's settings the action obeys (`reachable`: `OUTBOUND_ALLOW_CIDRS`)
 */
export async function runActionHelper(
  ctx: RunContext,
  input: StepExecInput,
  action: string,
  resolved: Record<string, unknown>,
  host: Record<string, unknown> = {},
): Promise<StepExecResult> {
  const specFile = `${input.scriptFile}.action.json`;
  await writeFile(specFile, JSON.stringify({ action, with: resolved, host }), { mode: 0o600 });
  await ctx.launcher.adopt(specFile);
  try {
    const outcome = await runProcess({
      file: process.execPath,
      args: [actionHelperPath(), specFile],
      cwd: input.cwd,
      env: input.env,
      launcher: ctx.launcher,
      signal: input.signal,
      timeoutMs: input.timeoutMs,
      killGraceMs: ctx.config.killGraceMs,
      trace: { name: `step ${input.node.name}`, attributes: { 'dagu.step.action': action } },
      onStdout: input.onStdout,
      onStderr: input.onStderr,
    });
    const ok = outcome.exitCode === 0 && !outcome.timedOut && !outcome.aborted;
    if (ok) return { ok, exitCode: 0, timedOut: false, aborted: false };
    const error = outcome.timedOut
      ? `step timed out after ${(input.timeoutMs ?? 0) / 1000}s`
      : outcome.aborted
        ? 'aborted'
        : outcome.spawnError !== undefined
          ? `failed to start the action helper: ${outcome.spawnError}`
          : input.lastStderr() || `${action} failed (exit status ${outcome.exitCode ?? 'unknown'})`;
    return {
      ok: false,
      exitCode: outcome.exitCode ?? undefined,
      error,
      timedOut: outcome.timedOut,
      aborted: outcome.aborted,
    };
  } finally {
    await rm(specFile, { force: true });
  }
}

/** `host_action` steps. */
export const hostActionExecutor: StepExecutor = {
  publishesOutputs: true,
  run: async (ctx, input) => {
    const { action } = input.node.step;
    if (action === undefined || !('with' in action))
      return failed(`step ${input.node.name} of kind host_action has no host action`, input.onStderr);
    if (action.type === 'docker.run' || action.type === 'container.run')
      return failed(containerFailure(action), input.onStderr);
    let resolved: Record<string, unknown>;
    try {
      resolved = resolveHostActionWith(action, input.scope);
    } catch (error) {
      return failed(`${action.type}: ${error instanceof Error ? error.message : String(error)}`, input.onStderr);
    }
    if (action.type === 'mcp.call') {
      const target = mcpTarget(ctx, input, resolved);
      if (typeof target === 'string') return failed(`mcp.call: ${target}`, input.onStderr);
      return runActionHelper(ctx, input, action.type, target, { reachable: ctx.config.outboundAllowCidrs });
    }
    return runActionHelper(ctx, input, action.type, resolved);
  },
};

/**
 * `mcp.call`'s `with` with `server` replaced by its `RUN_MCP_SERVERS` entry:
 * its URL, and its headers (resolved against the step's scope) under the
 * step's own `headers`; or the error text for an unknown server name.
 */
function mcpTarget(
  ctx: RunContext,
  input: StepExecInput,
  resolved: Record<string, unknown>,
): Record<string, unknown> | string {
  const own = asStringMap(resolved.headers);
  if (typeof resolved.server !== 'string') return { ...resolved, headers: own };
  const entry = Object.hasOwn(ctx.config.mcpServers, resolved.server)
    ? ctx.config.mcpServers[resolved.server]
    : undefined;
  if (entry === undefined) {
    const names = Object.keys(ctx.config.mcpServers);
    return `unknown server '${resolved.server}': RUN_MCP_SERVERS names ${names.length === 0 ? 'none' : names.join(', ')}`;
  }
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(entry.headers)) headers[key] = interpolate(value, input.scope, 'plain');
  const { server: _server, ...rest } = resolved;
  return { ...rest, url: entry.url, headers: { ...headers, ...own } };
}

function asStringMap(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}
