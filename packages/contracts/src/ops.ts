import { defineOps, PingReplySchema, PingRequestSchema, type OpDefinition } from './bus';
import type { Role } from './principal';
import {
  DagChangeRequestSchema,
  DagDeleteReplySchema,
  DagSuspendRequestSchema,
  DagSchedulesReplySchema,
  DagSchedulesRequestSchema,
  DagDetailSchema,
  DagListIfChangedReplySchema,
  DagListIfChangedRequestSchema,
  DagListReplySchema,
  DagListRequestSchema,
  DagNameRequestSchema,
  DagRenameReplySchema,
  DagRenameRequestSchema,
  DagSearchReplySchema,
  DagSearchRequestSchema,
  DagSpecReplySchema,
  DagUpsertReplySchema,
  DagValidationSchema,
} from './dag';
import {
  RunDetailSchema,
  RunGetRequestSchema,
  RunLatestReplySchema,
  RunLatestRequestSchema,
  RunHumanTaskRequestSchema,
  RunApprovalRequestSchema,
  ForeachItemsRequestSchema,
  ForeachItemsReplySchema,
  ForeachItemRequestSchema,
  ForeachItemReplySchema,
  RunListReplySchema,
  RunListRequestSchema,
  RunLogsReplySchema,
  RunLogsRequestSchema,
  RunRefSchema,
  RunRetryRequestSchema,
  RunStartRequestSchema,
  RunStopRequestSchema,
  StepLogReplySchema,
  StepLogRequestSchema,
} from './run';
import {
  WikiCheckReplySchema,
  WikiCheckRequestSchema,
  WikiDeleteReplySchema,
  WikiDeleteRequestSchema,
  WikiListReplySchema,
  WikiListRequestSchema,
  WikiPageRefSchema,
  WikiPageSchema,
  WikiPutReplySchema,
  WikiPutRequestSchema,
  WikiRenameReplySchema,
  WikiRenameRequestSchema,
  WikiSearchReplySchema,
  WikiSearchRequestSchema,
} from './wiki';
import { WorkbookModelSchema, WorkbookReadRequestSchema } from './workbook';
import {
  DagProfileReplySchema,
  DagProfileRequestSchema,
  ProfileAssignReplySchema,
  ProfileAssignRequestSchema,
  ProfileDefaultReplySchema,
  ProfileDefaultRequestSchema,
  ProfileDeleteReplySchema,
  ProfileListReplySchema,
  ProfileListRequestSchema,
  ProfilePutReplySchema,
  ProfilePutRequestSchema,
  ProfileRefSchema,
  ProfileViewSchema,
} from './profile';
import {
  AgentCreateRequestSchema,
  AgentDeleteReplySchema,
  AgentListReplySchema,
  AgentListRequestSchema,
  AgentRefSchema,
  AgentSchema,
  AgentSetToolsRequestSchema,
  AgentUpdateRequestSchema,
  AgentWithToolsSchema,
} from './agent';
import {
  OperationCallReplySchema,
  OperationCallRequestSchema,
  OperationCreateRequestSchema,
  OperationDeleteReplySchema,
  OperationDetailSchema,
  OperationImportReplySchema,
  OperationImportRequestSchema,
  OperationListReplySchema,
  OperationListRequestSchema,
  OperationNewVersionRequestSchema,
  OperationPublishRequestSchema,
  OperationRefSchema,
  OperationToolReplySchema,
  OperationToolRequestSchema,
  OperationUpdateRequestSchema,
  OperationWriteReplySchema,
  UpstreamDeleteReplySchema,
  UpstreamListReplySchema,
  UpstreamPutReplySchema,
  UpstreamPutRequestSchema,
  UpstreamRefSchema,
  UpstreamViewSchema,
} from './rest-operation';

/** An op of the product catalogs: unlike a test catalog's, it must name its role (dagu-model §9). */
type ProductOp = OpDefinition & { readonly role: Role };

/** {@link defineOps} for the product catalogs: the compiler refuses an op without a `role`. */
function productOps<const T extends Record<string, ProductOp>>(catalog: T): T {
  return defineOps(catalog);
}

/**
 * The op catalogs of the three services. Each later capability adds its ops
 * here (additively: a breaking change is a new op name, CONTRIBUTING §3).
 */
export const dagOps = productOps({
  ping: { role: 'viewer', request: PingRequestSchema, reply: PingReplySchema, mutation: false },
  /** Validate a DAG YAML (022 preview). Writes nothing. */
  'dag.validate': { role: 'viewer', request: DagChangeRequestSchema, reply: DagValidationSchema, mutation: false },
  /** Validate, then create or update one DAG atomically (022 apply). */
  'dag.upsert': { role: 'developer', request: DagChangeRequestSchema, reply: DagUpsertReplySchema, mutation: true },
  /** One page of DAG summaries (021 `dags`). */
  'dag.list': { role: 'viewer', request: DagListRequestSchema, reply: DagListReplySchema, mutation: false },
  /** A `dag.list` page only when it differs from the caller's tagged copy (021 `dags`). */
  'dag.listIfChanged': {
    role: 'viewer',
    request: DagListIfChangedRequestSchema,
    reply: DagListIfChangedReplySchema,
    mutation: false,
  },
  /** The DAG detail model (021 `dag`). */
  'dag.get': { role: 'viewer', request: DagNameRequestSchema, reply: DagDetailSchema, mutation: false },
  /** The stored YAML (021 `dag_spec`, `dagu://dags/{name}/spec`). */
  'dag.spec': { role: 'viewer', request: DagNameRequestSchema, reply: DagSpecReplySchema, mutation: false },
  /** Line-snippet search over DAG specs (021 `dag_search`). */
  'dag.search': { role: 'viewer', request: DagSearchRequestSchema, reply: DagSearchReplySchema, mutation: false },
  /** Delete one DAG (REST). */
  'dag.delete': { role: 'developer', request: DagNameRequestSchema, reply: DagDeleteReplySchema, mutation: true },
  /**
   * Rename one DAG (Dagu spec 022b `rename_dag`). Its
   * run history follows through the outbox (`DAG_MOVES_QUEUE`).
   */
  'dag.rename': { role: 'developer', request: DagRenameRequestSchema, reply: DagRenameReplySchema, mutation: true },
  /** Suspend or resume one DAG (REST); replies with the DAG detail model. */
  'dag.setSuspended': { role: 'developer', request: DagSuspendRequestSchema, reply: DagDetailSchema, mutation: true },
  /** The DAGs that have a schedule (run-service's scheduler; optionally some names, with their YAML). */
  'dag.schedules': {
    role: 'viewer',
    request: DagSchedulesRequestSchema,
    reply: DagSchedulesReplySchema,
    mutation: false,
  },
});

export const runOps = productOps({
  ping: { role: 'viewer', request: PingRequestSchema, reply: PingReplySchema, mutation: false },
  /** Start or enqueue a run (036 start/enqueue). */
  'run.start': {
    role: 'operator',
    /** Starting a run of YAML the caller supplies is authoring (`inline: true`). */
    roleFor: (request: { inline: boolean }) => (request.inline ? 'developer' : 'operator'),
    request: RunStartRequestSchema,
    reply: RunRefSchema,
    mutation: true,
  },
  /** New attempt of a run, whole or from a step (036 retry). */
  'run.retry': { role: 'operator', request: RunRetryRequestSchema, reply: RunRefSchema, mutation: true },
  /** Abort a running or waiting run (036 stop). */
  'run.stop': { role: 'operator', request: RunStopRequestSchema, reply: RunRefSchema, mutation: true },
  /** The run-detail model (021 `run`). */
  'run.get': { role: 'viewer', request: RunGetRequestSchema, reply: RunDetailSchema, mutation: false },
  /** One page of run summaries (021 `runs`). */
  'run.list': { role: 'viewer', request: RunListRequestSchema, reply: RunListReplySchema, mutation: false },
  /** The run-log model (021 `run_logs`). */
  'run.logs': { role: 'viewer', request: RunLogsRequestSchema, reply: RunLogsReplySchema, mutation: false },
  /** One step's log (021 `step_log`). */
  'run.stepLog': { role: 'viewer', request: StepLogRequestSchema, reply: StepLogReplySchema, mutation: false },
  /** Latest run per DAG name (021 `dag.latestRun`). */
  'run.latest': { role: 'viewer', request: RunLatestRequestSchema, reply: RunLatestReplySchema, mutation: false },
  /** Complete a waiting human task; the run resumes by itself. */
  'run.humanTask': { role: 'operator', request: RunHumanTaskRequestSchema, reply: RunRefSchema, mutation: true },
  /** Approve or reject a waiting approval gate. */
  'run.approval': { role: 'operator', request: RunApprovalRequestSchema, reply: RunRefSchema, mutation: true },
  /** The items of a foreach step (021 `foreach_items`). */
  'run.foreachItems': {
    role: 'viewer',
    request: ForeachItemsRequestSchema,
    reply: ForeachItemsReplySchema,
    mutation: false,
  },
  /** One foreach item (021 `foreach_item`). */
  'run.foreachItem': {
    role: 'viewer',
    request: ForeachItemRequestSchema,
    reply: ForeachItemReplySchema,
    mutation: false,
  },
  /** The workbook model of a file where steps run (021 `workbook`); the request carries a password. */
  'run.workbook': {
    role: 'developer',
    request: WorkbookReadRequestSchema,
    reply: WorkbookModelSchema,
    mutation: false,
    timeoutMs: 30_000,
    carriesSecret: true,
  },
  /** Runtime profiles of a workspace: names and variable names, and the default (Dagu spec 022b). */
  'profile.list': {
    role: 'operator',
    request: ProfileListRequestSchema,
    reply: ProfileListReplySchema,
    mutation: false,
  },
  /** One profile; secret variables by name only. */
  'profile.get': { role: 'operator', request: ProfileRefSchema, reply: ProfileViewSchema, mutation: false },
  /** Create or replace a profile (manager); the request carries secret values. */
  'profile.put': {
    role: 'manager',
    request: ProfilePutRequestSchema,
    reply: ProfilePutReplySchema,
    mutation: true,
    carriesSecret: true,
  },
  /** Delete a profile (manager). */
  'profile.delete': { role: 'manager', request: ProfileRefSchema, reply: ProfileDeleteReplySchema, mutation: true },
  /** Set or clear a workspace's default profile (manager). */
  'profile.setDefault': {
    role: 'manager',
    request: ProfileDefaultRequestSchema,
    reply: ProfileDefaultReplySchema,
    mutation: true,
  },
  /** Set or clear a DAG's own default profile (022b `set_dag_profile`, `clear_dag_profile`; developer). */
  'profile.assign': {
    role: 'developer',
    request: ProfileAssignRequestSchema,
    reply: ProfileAssignReplySchema,
    mutation: true,
  },
  /** A DAG's configured and effective profile (`dagu_read` target `dag_profile`). */
  'profile.ofDag': { role: 'viewer', request: DagProfileRequestSchema, reply: DagProfileReplySchema, mutation: false },
});

export const wikiOps = productOps({
  ping: { role: 'viewer', request: PingRequestSchema, reply: PingReplySchema, mutation: false },
  /** One page of the wiki collection, tree or flat (021 `wiki`, `dagu://wiki[/{workspace}]`). */
  'wiki.list': { role: 'viewer', request: WikiListRequestSchema, reply: WikiListReplySchema, mutation: false },
  /** One page with its Markdown (021 `wiki_page`, `dagu://wiki/{workspace}/{path}`). */
  'wiki.get': { role: 'viewer', request: WikiPageRefSchema, reply: WikiPageSchema, mutation: false },
  /** Line-snippet search over page titles and bodies (021 `wiki_search`). */
  'wiki.search': { role: 'viewer', request: WikiSearchRequestSchema, reply: WikiSearchReplySchema, mutation: false },
  /** Create or replace one page atomically (REST `PUT /api/v1/wiki/{workspace}/pages/{path}`). */
  'wiki.put': { role: 'developer', request: WikiPutRequestSchema, reply: WikiPutReplySchema, mutation: true },
  /** Delete one page atomically (REST `DELETE /api/v1/wiki/{workspace}/pages/{path}`). */
  'wiki.delete': { role: 'developer', request: WikiDeleteRequestSchema, reply: WikiDeleteReplySchema, mutation: true },
  /** Move one page to a new path (Dagu spec 022b `rename_wiki_page`). */
  'wiki.rename': { role: 'developer', request: WikiRenameRequestSchema, reply: WikiRenameReplySchema, mutation: true },
  /** Check a page change without writing (Dagu spec 022b preview of the wiki types). */
  'wiki.check': { role: 'viewer', request: WikiCheckRequestSchema, reply: WikiCheckReplySchema, mutation: false },
});

/** agent-service: published agents and their catalogs. Writes need `manager` (dagu-model §9). */
export const agentOps = productOps({
  ping: { role: 'viewer', request: PingRequestSchema, reply: PingReplySchema, mutation: false },
  /** The agents of one workspace, by slug. */
  'agent.list': { role: 'manager', request: AgentListRequestSchema, reply: AgentListReplySchema, mutation: false },
  /** One agent with its catalog (REST, and the gateway's catalog cache). */
  'agent.get': { role: 'manager', request: AgentRefSchema, reply: AgentWithToolsSchema, mutation: false },
  /** Create an agent (`conflict` when the slug is taken in the workspace). */
  'agent.create': { role: 'manager', request: AgentCreateRequestSchema, reply: AgentSchema, mutation: true },
  /** Change title, description or state. */
  'agent.update': { role: 'manager', request: AgentUpdateRequestSchema, reply: AgentSchema, mutation: true },
  /** Delete an agent and its catalog. */
  'agent.delete': { role: 'manager', request: AgentRefSchema, reply: AgentDeleteReplySchema, mutation: true },
  /** Replace the catalog (tool names unique per agent). */
  'agent.setTools': {
    role: 'manager',
    request: AgentSetToolsRequestSchema,
    reply: AgentWithToolsSchema,
    mutation: true,
  },
  /** REST operations as tools: a workspace's upstreams, credentials never in a reply. */
  'upstream.list': {
    role: 'manager',
    request: OperationListRequestSchema,
    reply: UpstreamListReplySchema,
    mutation: false,
  },
  'upstream.get': { role: 'manager', request: UpstreamRefSchema, reply: UpstreamViewSchema, mutation: false },
  /** Create or replace an upstream; the request carries its credential. */
  'upstream.put': {
    role: 'manager',
    request: UpstreamPutRequestSchema,
    reply: UpstreamPutReplySchema,
    mutation: true,
    carriesSecret: true,
  },
  'upstream.delete': { role: 'manager', request: UpstreamRefSchema, reply: UpstreamDeleteReplySchema, mutation: true },
  'operation.list': {
    role: 'manager',
    request: OperationListRequestSchema,
    reply: OperationListReplySchema,
    mutation: false,
  },
  'operation.get': { role: 'manager', request: OperationRefSchema, reply: OperationDetailSchema, mutation: false },
  /** A new operation, version 1 a draft. */
  'operation.create': {
    role: 'manager',
    request: OperationCreateRequestSchema,
    reply: OperationWriteReplySchema,
    mutation: true,
  },
  /** Texts, and the current draft's spec. */
  'operation.update': {
    role: 'manager',
    request: OperationUpdateRequestSchema,
    reply: OperationWriteReplySchema,
    mutation: true,
  },
  'operation.delete': {
    role: 'manager',
    request: OperationRefSchema,
    reply: OperationDeleteReplySchema,
    mutation: true,
  },
  /** A new draft version. */
  'operation.newVersion': {
    role: 'manager',
    request: OperationNewVersionRequestSchema,
    reply: OperationWriteReplySchema,
    mutation: true,
  },
  /** Publish a draft: agents bound to `latest` serve it from now on. */
  'operation.publish': {
    role: 'manager',
    request: OperationPublishRequestSchema,
    reply: OperationWriteReplySchema,
    mutation: true,
  },
  /** An OpenAPI 3 document → draft operations. */
  'operation.import': {
    role: 'manager',
    request: OperationImportRequestSchema,
    reply: OperationImportReplySchema,
    mutation: true,
    timeoutMs: 30_000,
  },
  /** The tool a `rest_operation` binding publishes (published versions only; the gateway's catalog cache). */
  'operation.tool': {
    role: 'viewer',
    request: OperationToolRequestSchema,
    reply: OperationToolReplySchema,
    mutation: false,
  },
  /**
   * One `tools/call` of a REST tool: agent-service validates, calls the upstream with its credential and
   * answers the tool result. Not a mutation of ours (never retried by the bus); the deadline covers an
   * operation's longest call (60 s × 4 attempts with backoff).
   */
  'operation.call': {
    role: 'operator',
    request: OperationCallRequestSchema,
    reply: OperationCallReplySchema,
    mutation: false,
    timeoutMs: 250_000,
  },
});

export const OP_CATALOGS = { dag: dagOps, run: runOps, wiki: wikiOps, agent: agentOps } as const;
export type DagOps = typeof dagOps;
export type RunOps = typeof runOps;
export type WikiOps = typeof wikiOps;
export type AgentOps = typeof agentOps;
