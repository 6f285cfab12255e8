import {
  dagOps,
  requireOpRole,
  runOps,
  type DagListIfChangedReply,
  type DagListReply,
  type DagListRequest,
  type DagOps,
  type OpReply,
  type OpRequest,
  type Principal,
  type RunOps,
} from '@dagu-mcp/contracts';
import { isUnknownOpError, type BusClient } from '@dagu-mcp/bus';
import { timeoutOf, type ReadOptions } from './read-options';

/**
 * DAG reads (Dagu spec 021 `dags`, `dag`, `dag_spec`, `dag_search`; 022b
 * `dag_profile`): each is one dag-service call over the bus, except the
 * profile of a DAG, which also asks run-service. Every role may read
 * (dagu-model §9); the check is still made once here, as for every action.
 */

type Request<K extends keyof DagOps> = OpRequest<DagOps, K>;
type Reply<K extends keyof DagOps> = OpReply<DagOps, K>;

/** Asks dag-service for a page (`dag.listIfChanged`), passing the tag of the copy held, if any. */
export type TaggedPageFetch = (
  query: DagListRequest,
  ifNoneMatch: string | undefined,
) => Promise<DagListIfChangedReply>;

/**
 * Tagged copies of `dags` pages (the gateway replica's page memo):
 * `read` answers the held copy when `fetch` says its tag is current, else the
 * page `fetch` brought.
 */
export interface DagPageCache {
  read(query: DagListRequest, fetch: TaggedPageFetch): Promise<DagListReply>;
}

/**
 * A page of DAGs (`dag.list`, the 021 `dags` query: `page` default 1,
 * `perPage` default 50, `name`, `labels`, `sort`, `order`).
 * @throws DaguError `invalid_tool_input` (the query fails the op's schema), `resource_unavailable`
 */
export async function listDags(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.list'>,
  options: ReadOptions = {},
): Promise<Reply<'dag.list'>> {
  requireOpRole(principal, 'dag.list');
  return bus.call('dag', dagOps, 'dag.list', input, { principal, ...timeoutOf(options) });
}

/**
 * A page of DAGs through the replica's `pages` cache (021 `dags`):
 * one `dag.listIfChanged` call with the held copy's tag, so dag-service stays
 * the judge of freshness and the page travels only when it changed. A
 * dag-service older than the gateway (a rolling upgrade) knows only
 * `dag.list`; it is asked then, and nothing is cached. This is the hot path
 * of `dagu_read dags` (benchmarks S1, S3): one bus call, nothing else.
 *
 * @throws DaguError as {@link listDags}; an `Error` when dag-service answers
 *   "unchanged" for a tag the read did not send (the cache's check)
 */
export async function listDagsIfChanged(
  bus: BusClient,
  principal: Principal,
  query: DagListRequest,
  pages: DagPageCache,
): Promise<DagListReply> {
  requireOpRole(principal, 'dag.listIfChanged');
  try {
    return await pages.read(query, (asked, ifNoneMatch) =>
      bus.call('dag', dagOps, 'dag.listIfChanged', ifNoneMatch === undefined ? asked : { ...asked, ifNoneMatch }, {
        principal,
      }),
    );
  } catch (error) {
    if (!isUnknownOpError(error, 'dag.listIfChanged')) throw error;
    return bus.call('dag', dagOps, 'dag.list', query, { principal });
  }
}

/**
 * The DAG detail model (`dag.get`, 021 `dag`).
 * @throws DaguError `resource_not_found` (with suggestions) when no such DAG, `invalid_tool_input` on `name`
 */
export async function getDag(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.get'>,
): Promise<Reply<'dag.get'>> {
  requireOpRole(principal, 'dag.get');
  return bus.call('dag', dagOps, 'dag.get', input, { principal });
}

/**
 * The stored YAML of a DAG and what validating it reports today (`dag.spec`, 021 `dag_spec`).
 * @throws DaguError as {@link getDag}
 */
export async function getDagSpec(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.spec'>,
): Promise<Reply<'dag.spec'>> {
  requireOpRole(principal, 'dag.spec');
  return bus.call('dag', dagOps, 'dag.spec', input, { principal });
}

/**
 * Line-snippet search over DAG specs (`dag.search`, 021 `dag_search`: `search`,
 * `workspace?`, `cursor?`, `limit?`).
 * @throws DaguError `invalid_tool_input` (on `cursor` for a cursor of another search)
 */
export async function searchDags(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.search'>,
): Promise<Reply<'dag.search'>> {
  requireOpRole(principal, 'dag.search');
  return bus.call('dag', dagOps, 'dag.search', input, { principal });
}

/**
 * The runtime profile a DAG's runs get (Dagu spec 022b `dag_profile`): the DAG
 * must exist (`dag.get`: its not-found error with suggestions), and its
 * workspace ({@link workspaceOfLabels}) decides the fallback profile that
 * run-service's `profile.ofDag` answers.
 * @throws DaguError `resource_not_found` when no such DAG
 */
export async function getDagProfile(
  bus: BusClient,
  principal: Principal,
  input: { dagName: string },
): Promise<OpReply<RunOps, 'profile.ofDag'>> {
  requireOpRole(principal, 'profile.ofDag');
  const detail = await bus.call('dag', dagOps, 'dag.get', { name: input.dagName }, { principal });
  const workspace = workspaceOfLabels(detail.labels);
  return bus.call('run', runOps, 'profile.ofDag', { dagName: input.dagName, workspace }, { principal });
}

/** A DAG's workspace (Dagu spec 022b): its first `workspace=<name>` label's value, else `default`. */
export function workspaceOfLabels(labels: readonly string[]): string {
  for (const label of labels) {
    const value = label.startsWith('workspace=') ? label.slice('workspace='.length).trim() : '';
    if (value !== '') return value;
  }
  return 'default';
}
