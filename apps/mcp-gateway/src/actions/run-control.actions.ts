import { DaguError, formatDaguUri, requireOpRole, runOps, type Principal, type RunRef } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { prescanYaml } from '@dagu-mcp/dag-spec';

/**
 * Run control (Dagu spec 036 §Semantics): start or enqueue a stored DAG or an
 * inline spec, retry a run, stop a run — each one call to run-service. Every
 * face calls these: `dagu_execute` (MCP), the REST run routes and the agents'
 * DAG tools (through `dagu_execute`). Inputs are already validated by the
 * face (036 §Input); run-service checks them again against the op's schema.
 */

/**
 * A start or enqueue (`run.start`). A stored DAG goes by name: run-service
 * reads its YAML from its own cache of dag-service's `dag.spec` (docs/decisions.md "DAG spec cache"). With `spec` the start is inline: the
 * caller supplies the YAML, which is authoring (dagu-model §9).
 */
export interface StartRunInput {
  readonly dagName: string;
  /** The YAML of an inline start; absent for a stored DAG. */
  readonly spec?: string;
  /** Queue the run instead of starting it now; default false. */
  readonly enqueue?: boolean;
  readonly dagRunId?: string;
  /** `A=1 B=2`, or compact JSON (036 re-encodes an object with its keys sorted). */
  readonly params?: string;
  /** The named queue of an enqueue. */
  readonly queue?: string;
  readonly labels?: readonly string[];
  readonly singleton?: boolean;
  /** Runtime profile for this run (Dagu spec 022b). */
  readonly profile?: string;
}

/** A retry (`run.retry`): a new attempt of the same run, whole or from `stepName` (with its downstream steps). */
export interface RetryRunInput {
  readonly dagName: string;
  readonly dagRunId: string;
  readonly stepName?: string;
  readonly includeDownstream?: boolean;
}

/** A stop (`run.stop`) of a running or waiting run. */
export interface StopRunInput {
  readonly dagName: string;
  readonly dagRunId: string;
}

/** One run-control request of 036, by its action. */
export type RunControlRequest =
  | ({ readonly action: 'start' | 'enqueue' } & Omit<StartRunInput, 'enqueue'>)
  | ({ readonly action: 'retry' } & RetryRunInput)
  | ({ readonly action: 'stop' } & StopRunInput);

/**
 * Refuses a caller below the role `request` needs (dagu-model §9): `run.start`
 * (operator; developer for an inline spec), `run.retry`, `run.stop` (operator).
 * {@link performRunControl} checks it itself; a face that continues an earlier
 * request without acting again (a `dagu_execute` wait resumed from its sealed
 * state) checks it with this, so the caller's role still counts.
 * @throws DaguError `unauthorized` naming the op and the role it needs
 */
export function requireRunControlRole(principal: Principal, request: RunControlRequest): void {
  switch (request.action) {
    case 'retry':
      return requireOpRole(principal, 'run.retry');
    case 'stop':
      return requireOpRole(principal, 'run.stop');
    case 'start':
    case 'enqueue':
      return requireOpRole(principal, 'run.start', { inline: request.spec !== undefined });
  }
}

/**
 * Starts or enqueues a run (`run.start`, 036 §Semantics): by name, or inline
 * when `spec` is given (the op's `roleFor`: developer). Optional inputs stay
 * absent on the wire.
 * @returns the run reference `{dagName, dagRunId, attemptId?, status, statusLabel}`
 * @throws DaguError `unauthorized` below operator (developer for an inline spec);
 *   `invalid_tool_input` on `spec` for an inline spec past the pre-scan's bounds (checked here);
 *   run-service's errors as it replies: an unknown stored DAG is dag-service's
 *   `resource_not_found` with `details.didYouMean`, a refused param
 *   `invalid_tool_input` on `params`, a taken run id `conflict`
 */
export async function startRun(bus: BusClient, principal: Principal, input: StartRunInput): Promise<RunRef> {
  const inline = input.spec !== undefined;
  requireOpRole(principal, 'run.start', { inline });
  const { dagName, spec, dagRunId, params, queue, labels, singleton, profile } = input;
  if (spec !== undefined) refuseUnscannable(spec);
  const payload = {
    dagName,
    ...(spec !== undefined ? { spec } : {}),
    inline,
    enqueue: input.enqueue ?? false,
    ...(dagRunId !== undefined ? { dagRunId } : {}),
    ...(params !== undefined ? { params } : {}),
    ...(queue !== undefined ? { queue } : {}),
    ...(labels !== undefined ? { labels: [...labels] } : {}),
    ...(singleton !== undefined ? { singleton } : {}),
    ...(profile !== undefined ? { profile } : {}),
  };
  if (dagRunId === undefined) return bus.call('run', runOps, 'run.start', payload, { principal });
  // dagu-model §10: an unknown outcome names the run id when one was assigned (here, by the caller).
  return bus.call('run', runOps, 'run.start', payload, { principal }).catch((error: unknown) => {
    if (!(error instanceof DaguError) || error.details?.outcome !== 'unknown') throw error;
    throw new DaguError(error.code, error.message, { details: { ...error.details, dagRunId } });
  });
}

/**
 * Refuses an inline spec past the pre-scan's bounds at the gateway, as run-service would
 * (the text never crosses Redis to be refused there).
 *
 * @throws DaguError `invalid_tool_input` on `spec`, `details.errors` the one error
 */
function refuseUnscannable(spec: string): void {
  const problem = prescanYaml(spec);
  if (problem === undefined) return;
  const error = `invalid YAML: ${problem.message}`;
  throw new DaguError('invalid_tool_input', `The DAG spec is invalid: ${error}`, {
    field: 'spec',
    details: { errors: [error] },
  });
}

/**
 * Retries a run (`run.retry`, 036 §Semantics): a new attempt with the same run id.
 * @returns the run reference; `attemptId` names the new attempt
 * @throws DaguError `unauthorized` below operator; run-service's `resource_not_found`
 *   (run or step), `conflict` (the run is still active)
 */
export async function retryRun(bus: BusClient, principal: Principal, input: RetryRunInput): Promise<RunRef> {
  requireOpRole(principal, 'run.retry');
  const { dagName, dagRunId, stepName, includeDownstream } = input;
  const payload = {
    dagName,
    dagRunId,
    ...(stepName !== undefined ? { stepName } : {}),
    ...(includeDownstream !== undefined ? { includeDownstream } : {}),
  };
  return bus.call('run', runOps, 'run.retry', payload, { principal });
}

/**
 * Stops a running or waiting run (`run.stop`, 036 §Semantics).
 * @returns the run reference
 * @throws DaguError `unauthorized` below operator; run-service's `resource_not_found`,
 *   `invalid_tool_input` when the run is not running
 */
export async function stopRun(bus: BusClient, principal: Principal, input: StopRunInput): Promise<RunRef> {
  requireOpRole(principal, 'run.stop');
  return bus.call('run', runOps, 'run.stop', { dagName: input.dagName, dagRunId: input.dagRunId }, { principal });
}

/**
 * The one action of a 036 request: {@link startRun} (start, enqueue),
 * {@link retryRun} or {@link stopRun}.
 * @throws DaguError as the action it performs
 */
export async function performRunControl(
  bus: BusClient,
  principal: Principal,
  request: RunControlRequest,
): Promise<RunRef> {
  switch (request.action) {
    case 'retry':
      return retryRun(bus, principal, request);
    case 'stop':
      return stopRun(bus, principal, request);
    case 'start':
    case 'enqueue':
      return startRun(bus, principal, { ...request, enqueue: request.action === 'enqueue' });
  }
}

/** A run identified by its DAG name and run id. */
export interface IdentifiedRun {
  readonly dagName: string;
  readonly dagRunId: string;
}

/**
 * The run's resource URIs, answered with every run-control and checkpoint
 * reply on each face: `dagu://runs/{name}/{id}` and its `/logs` (Dagu spec 020
 * escaping).
 */
export function runUris(run: IdentifiedRun): { runUri: string; logsUri: string } {
  return {
    runUri: formatDaguUri({ kind: 'run', name: run.dagName, dagRunId: run.dagRunId }),
    logsUri: formatDaguUri({ kind: 'run_logs', name: run.dagName, dagRunId: run.dagRunId }),
  };
}
