import { requireOpRole, runOps, type OpReply, type OpRequest, type Principal, type RunOps } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { timeoutOf, type ReadOptions } from './read-options';

/**
 * Run reads (Dagu spec 021 run targets; dagu-model §5): the run collection,
 * one run, its logs, a step's log, a foreach step's items and the DAGs'
 * latest runs — each one call to run-service, open to every role
 * (dagu-model §9). `dagu_read`, `dagu://runs/…` resources, the REST run
 * routes and `dagu_execute`'s wait call them. Queries arrive parsed (021
 * §Query handling); run-service checks them again against the op's schema.
 */

type Request<K extends keyof RunOps> = OpRequest<RunOps, K>;
type Reply<K extends keyof RunOps> = OpReply<RunOps, K>;

export type { ReadOptions };

/**
 * The run collection model (`run.list`, 021 `runs`): newest first, with
 * `nextCursor` while more remain.
 * @throws DaguError `unauthorized` without a role; run-service's errors on a bad
 *   query (a bad `cursor` names the field `cursor`)
 */
export async function listRuns(
  bus: BusClient,
  principal: Principal,
  query: Request<'run.list'>,
  options: ReadOptions = {},
): Promise<Reply<'run.list'>> {
  requireOpRole(principal, 'run.list');
  return bus.call('run', runOps, 'run.list', query, { principal, ...timeoutOf(options) });
}

/**
 * The run-detail model (`run.get`, 021 `run`; dagu-model §5); `subRunId`
 * addresses a child run under its root, and the run id `latest` the DAG's
 * latest run.
 * @param options `timeoutMs` bounds this read (a `dagu_execute` wait reads within its own deadline)
 * @throws DaguError `unauthorized` without a role; `resource_not_found` for an unknown run
 */
export async function getRun(
  bus: BusClient,
  principal: Principal,
  input: Request<'run.get'>,
  options: ReadOptions = {},
): Promise<Reply<'run.get'>> {
  requireOpRole(principal, 'run.get');
  return bus.call('run', runOps, 'run.get', input, { principal, ...timeoutOf(options) });
}

/**
 * The run-log model (`run.logs`, 021 `run_logs`): the scheduler log's last
 * `tail` lines (default 500) and each step's stream flags.
 * @throws DaguError `unauthorized` without a role; `resource_not_found` for an unknown run
 */
export async function getRunLogs(
  bus: BusClient,
  principal: Principal,
  input: Request<'run.logs'>,
): Promise<Reply<'run.logs'>> {
  requireOpRole(principal, 'run.logs');
  return bus.call('run', runOps, 'run.logs', input, { principal });
}

/**
 * The step-log model (`run.stepLog`, 021 `step_log`): a step's stdout and
 * stderr with the log reader options; `item` and `bodyStepName` address a
 * foreach body step of one item.
 * @throws DaguError `unauthorized` without a role; `resource_not_found` for an
 *   unknown run, step or log stream
 */
export async function getStepLog(
  bus: BusClient,
  principal: Principal,
  input: Request<'run.stepLog'>,
): Promise<Reply<'run.stepLog'>> {
  requireOpRole(principal, 'run.stepLog');
  return bus.call('run', runOps, 'run.stepLog', input, { principal });
}

/**
 * The foreach-items model (`run.foreachItems`, 021 `foreach_items`): one page
 * of a foreach step's items with their counts; `query.parent` lists a nested foreach.
 * @throws DaguError `unauthorized` without a role; `resource_not_found` for an
 *   unknown run or a step that is no foreach
 */
export async function listForeachItems(
  bus: BusClient,
  principal: Principal,
  input: Request<'run.foreachItems'>,
): Promise<Reply<'run.foreachItems'>> {
  requireOpRole(principal, 'run.foreachItems');
  return bus.call('run', runOps, 'run.foreachItems', input, { principal });
}

/**
 * The foreach-item model (`run.foreachItem`, 021 `foreach_item`): one item of
 * a foreach step and its body steps.
 * @throws DaguError `unauthorized` without a role; `resource_not_found` for an
 *   unknown run, step or item
 */
export async function getForeachItem(
  bus: BusClient,
  principal: Principal,
  input: Request<'run.foreachItem'>,
): Promise<Reply<'run.foreachItem'>> {
  requireOpRole(principal, 'run.foreachItem');
  return bus.call('run', runOps, 'run.foreachItem', input, { principal });
}

/**
 * The latest run of each named DAG (`run.latest`, at most 200 names): `latest`
 * maps a name to `{dagRunId, status, statusLabel}`; a DAG that never ran is absent.
 * @throws DaguError `unauthorized` without a role; `resource_unavailable` when run-service does not answer
 */
export async function getLatestRuns(
  bus: BusClient,
  principal: Principal,
  input: Request<'run.latest'>,
): Promise<Reply<'run.latest'>> {
  requireOpRole(principal, 'run.latest');
  return bus.call('run', runOps, 'run.latest', input, { principal });
}
