import type { Request } from 'express';
import { z } from 'zod';
import type { Principal } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { RouteAction } from '../actions/route-roles';
import { performRunControl, runUris } from '../actions/run-control.actions';
import {
  getForeachItem,
  getRun,
  getRunLogs,
  getStepLog,
  listForeachItems,
  listRuns,
} from '../actions/run-reads.actions';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { parseExecuteInput, runControlOf } from '../mcp/tools/execute/execute-input';
import { dagNameParam } from './dags.routes';
import { parseRequest } from './parse-body';
import { queryText, restQuery, statusLabelsToInts } from './run-status-query';

const StartBodySchema = z.strictObject({
  spec: z.string().optional(),
  params: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  dagRunId: z.string().optional(),
  labels: z.array(z.string()).optional(),
  singleton: z.boolean().optional(),
  noReuse: z.boolean().optional(),
});
const EnqueueBodySchema = StartBodySchema.extend({ queue: z.string().optional() });
const RetryBodySchema = z.strictObject({ stepName: z.string().optional(), includeDownstream: z.boolean().optional() });
const RunsQueryDoc = z.strictObject({
  name: z.string().optional(),
  dagRunId: z.string().optional(),
  status: z.string().optional(),
  fromDate: z.string().optional(),
  toDate: z.string().optional(),
  limit: z.string().optional(),
  cursor: z.string().optional(),
  labels: z.string().optional(),
});
const LogQueryDoc = z.strictObject({
  tail: z.string().optional(),
  head: z.string().optional(),
  offset: z.string().optional(),
  limit: z.string().optional(),
  stream: z.enum(['stdout', 'stderr']).optional(),
});

/**
 * Runs a run-control action with the same validation as `dagu_execute` (036
 * §Input) and the same action (actions/run-control.actions.ts). Input faults,
 * the parser's and run-service's (a refused param, dagu-model §3), answer 400
 * `invalid_request` with the same `field` (http/rest-errors.ts).
 */
async function control(bus: BusClient, principal: Principal, args: Record<string, unknown>) {
  const ref = await performRunControl(bus, principal, runControlOf(parseExecuteInput(args, {})));
  return { ...ref, ...runUris(ref) };
}

/**
 * DAG-run routes, each one run action (actions/run-control.actions.ts,
 * actions/run-reads.actions.ts): start/enqueue a stored DAG (or an inline
 * `spec`), stop, retry; list, details, run logs and step logs with the 021
 * query parameters. Who may call each is the op's role (dagu-model §9).
 */
export function runRoutes(bus: BusClient): RestRoutes {
  return (routes) => {
    for (const action of ['start', 'enqueue'] as const) {
      const body = action === 'start' ? StartBodySchema : EnqueueBodySchema;
      routes.post(
        `/dags/:name/${action}`,
        {
          action: 'run.start',
          summary: `${action === 'start' ? 'Start' : 'Enqueue'} a run of a DAG`,
          tag: 'dag-runs',
          body,
          status: 201,
        },
        async (req, res) => {
          const input = parseRequest(body, req.body);
          res
            .status(201)
            .json(await control(bus, principalOf(res), { ...input, action, name: dagNameParam(req.params.name) }));
        },
      );
    }
    routes.post(
      '/dag-runs/:name/:dagRunId/stop',
      { action: 'run.stop', summary: 'Stop a running or waiting run', tag: 'dag-runs' },
      async (req, res) => {
        res.json(
          await control(bus, principalOf(res), {
            action: 'stop',
            name: dagNameParam(req.params.name),
            dagRunId: String(req.params.dagRunId),
          }),
        );
      },
    );
    routes.post(
      '/dag-runs/:name/:dagRunId/retry',
      { action: 'run.retry', summary: 'Retry a run (whole, or from stepName)', tag: 'dag-runs', body: RetryBodySchema },
      async (req, res) => {
        const input = parseRequest(RetryBodySchema, req.body);
        res.json(
          await control(bus, principalOf(res), {
            ...input,
            action: 'retry',
            name: dagNameParam(req.params.name),
            dagRunId: String(req.params.dagRunId),
          }),
        );
      },
    );
    routes.get(
      '/dag-runs',
      {
        action: 'run.list',
        summary: 'List DAG-runs (the 021 `runs` query; status repeatable, as ints or labels such as `failed`)',
        tag: 'dag-runs',
        query: RunsQueryDoc,
      },
      async (req, res) => {
        const query = restQuery('runs', statusLabelsToInts(queryText(req))) ?? {};
        res.json(await listRuns(bus, principalOf(res), query));
      },
    );
    routes.get(
      '/dag-runs/:name/:dagRunId',
      {
        action: 'run.get',
        summary: 'The run-detail model',
        description:
          'dagu-model §5, with `startedBy` {kind: user|api_key|agent|schedule|parent, name, onBehalfOf?: {kind: user, id, name}} on the run (an agent is named `<workspace>/<slug>`; `onBehalfOf` the person signed in to it) and `decision` {by: {kind, name, onBehalfOf?}, at, outcome: completed|approved|rejected} on each decided human-task or approval step.',
        tag: 'dag-runs',
      },
      async (req, res) => {
        const payload = { dagName: dagNameParam(req.params.name), dagRunId: String(req.params.dagRunId) };
        res.json(await getRun(bus, principalOf(res), payload));
      },
    );
    routes.get(
      '/dag-runs/:name/:dagRunId/logs',
      {
        action: 'run.logs',
        summary: 'The run-log model (scheduler log tail and step streams)',
        tag: 'dag-runs',
        query: z.strictObject({ tail: z.string().optional() }),
      },
      async (req, res) => {
        const query = restQuery('run_logs', queryText(req));
        const payload = {
          dagName: dagNameParam(req.params.name),
          dagRunId: String(req.params.dagRunId),
          ...(query?.tail !== undefined ? { tail: query.tail } : {}),
        };
        res.json(await getRunLogs(bus, principalOf(res), payload));
      },
    );
    routes.get(
      '/dag-runs/:name/:dagRunId/steps/:stepName/log',
      {
        action: 'run.stepLog',
        summary: "One step's stdout/stderr with the log reader options",
        tag: 'dag-runs',
        query: LogQueryDoc,
      },
      async (req, res) => {
        const query = restQuery('step_log', queryText(req));
        const payload = {
          dagName: dagNameParam(req.params.name),
          dagRunId: String(req.params.dagRunId),
          stepName: String(req.params.stepName),
          ...(query !== undefined ? { query } : {}),
        };
        res.json(await getStepLog(bus, principalOf(res), payload));
      },
    );
    drillDownRoutes(bus)(routes);
  };
}

const ItemsQueryDoc = z.strictObject({
  parent: z.string().optional(),
  status: z.string().optional(),
  page: z.string().optional(),
  perPage: z.string().optional(),
});

/** `{dagName, dagRunId, subRunId?}` of a drill-down route (`…/sub/:subRunId…` addresses a child run under its root). */
function runAddress(req: Request): { dagName: string; dagRunId: string; subRunId?: string } {
  const sub = req.params.subRunId;
  return {
    dagName: dagNameParam(req.params.name),
    dagRunId: String(req.params.dagRunId),
    ...(sub !== undefined ? { subRunId: String(sub) } : {}),
  };
}

/**
 * Sub-run and foreach drill-down over REST (the console's run page), the
 * same run read actions as `dagu_read` targets `run` with `subRunId`, `step_log`, `foreach_items`
 * and `foreach_item` (021; dagu-model §5). Each route exists for a root run and, under
 * `/sub/:subRunId`, for a child run addressed under its root.
 */
function drillDownRoutes(bus: BusClient): RestRoutes {
  return (routes) => {
    const spec = (action: RouteAction, summary: string, extra: Record<string, unknown> = {}) => ({
      action,
      summary,
      tag: 'dag-runs',
      ...extra,
    });
    const run = '/dag-runs/:name/:dagRunId';
    const sub = `${run}/sub/:subRunId`;
    routes.get(
      sub,
      spec('run.get', 'The run-detail model of a child run, addressed under its root'),
      async (req, res) => {
        res.json(await getRun(bus, principalOf(res), runAddress(req)));
      },
    );
    routes.get(
      `${sub}/steps/:stepName/log`,
      spec('run.stepLog', "One step's stdout/stderr of a child run", { query: LogQueryDoc }),
      async (req, res) => {
        const query = restQuery('step_log', queryText(req));
        const payload = {
          ...runAddress(req),
          stepName: String(req.params.stepName),
          ...(query !== undefined ? { query } : {}),
        };
        res.json(await getStepLog(bus, principalOf(res), payload));
      },
    );
    for (const base of [run, sub]) {
      routes.get(
        `${base}/steps/:stepName/items`,
        spec('run.foreachItems', 'The foreach-items model of a foreach step (021 `foreach_items` query)', {
          query: ItemsQueryDoc,
        }),
        async (req, res) => {
          const query = restQuery('foreach_items', queryText(req));
          const payload = {
            ...runAddress(req),
            stepName: String(req.params.stepName),
            ...(query !== undefined ? { query } : {}),
          };
          res.json(await listForeachItems(bus, principalOf(res), payload));
        },
      );
      routes.get(
        `${base}/steps/:stepName/items/:item`,
        spec('run.foreachItem', 'The foreach-item model: one item of a foreach step and its body steps'),
        async (req, res) => {
          const payload = { ...runAddress(req), stepName: String(req.params.stepName), item: String(req.params.item) };
          res.json(await getForeachItem(bus, principalOf(res), payload));
        },
      );
      routes.get(
        `${base}/steps/:stepName/items/:item/steps/:bodyStepName/log`,
        spec('run.stepLog', "A foreach body step's stdout/stderr for one item", { query: LogQueryDoc }),
        async (req, res) => {
          const query = restQuery('step_log', queryText(req));
          const payload = {
            ...runAddress(req),
            stepName: String(req.params.stepName),
            item: String(req.params.item),
            bodyStepName: String(req.params.bodyStepName),
            ...(query !== undefined ? { query } : {}),
          };
          res.json(await getStepLog(bus, principalOf(res), payload));
        },
      );
    }
  };
}
