import type { Request } from 'express';
import { z } from 'zod';
import {
  DaguError,
  isValidWikiWorkspace,
  OperationNameSchema,
  UpstreamNameSchema,
  UpstreamPutRequestSchema,
  OperationCreateRequestSchema,
  OperationUpdateRequestSchema,
  OperationNewVersionRequestSchema,
  OperationImportRequestSchema,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import type { RouteAction } from '../actions/route-roles';
import {
  createOperation,
  deleteOperation,
  deleteUpstream,
  getOperation,
  getUpstream,
  importOperations,
  listOperations,
  listUpstreams,
  newOperationVersion,
  publishOperation,
  putUpstream,
  updateOperation,
} from '../actions/operation.actions';
import { parseRequest } from './parse-body';

/** The REST bodies: the bus requests without the address, which comes from the path. */
const PutUpstreamSchema = UpstreamPutRequestSchema.omit({ workspace: true, name: true });
const CreateOperationSchema = OperationCreateRequestSchema.omit({ workspace: true });
const PatchOperationSchema = OperationUpdateRequestSchema.omit({ workspace: true, name: true }).refine(
  (b) => Object.keys(b).length > 0,
  'give at least one of title, description, spec',
);
const NewVersionSchema = OperationNewVersionRequestSchema.omit({ workspace: true, name: true });
const ImportSchema = OperationImportRequestSchema.omit({ workspace: true });

/** What the REST-operation routes need. */
export interface RestOperationRouteDeps {
  readonly bus: BusClient;
  /**
   * Tells every gateway replica that an agent changed (`AgentCatalogCache.announce`): its tools are rebuilt.
   * The operation actions call it for the agents a write concerns (operation.actions.ts says why there).
   */
  readonly announce: (workspace: string, slug: string) => Promise<void>;
}

function workspaceParam(value: unknown): string {
  const ws = String(value);
  if (ws === 'all' || !isValidWikiWorkspace(ws))
    throw new DaguError('invalid_request', `Not a valid workspace name: ${ws}.`, { field: 'workspace' });
  return ws;
}

function nameParam(schema: z.ZodType<string>, value: unknown, field: string): string {
  const parsed = schema.safeParse(String(value));
  if (!parsed.success) throw new DaguError('invalid_request', `${field}: not a valid name`, { field });
  return parsed.data;
}

const upstreamRef = (req: Request) => ({
  workspace: workspaceParam(req.params.ws),
  name: nameParam(UpstreamNameSchema, req.params.name, 'name'),
});
const operationRef = (req: Request) => ({
  workspace: workspaceParam(req.params.ws),
  name: nameParam(OperationNameSchema, req.params.op, 'operation'),
});

/**
 * REST operations over REST, `manager` and up
 * (dagu-model §9): upstreams (a credential is write-only: no read returns
 * it), operations with versions, and OpenAPI import, each one operation
 * action. agent-service owns and audits all of it (`upstream.*`,
 * `operation.*` in the audit trail). A publish or a delete announces the
 * workspace's agents that bind the operation (the action does), so their
 * `tools/list` changes on every gateway replica at once; the bodies leave out
 * `boundAgents`, which is for that announcement only.
 */
export function restOperationRoutes(deps: RestOperationRouteDeps): RestRoutes {
  const { bus } = deps;
  const announcing = { announce: deps.announce };
  const upstreams = '/workspaces/:ws/upstreams';
  const operations = '/workspaces/:ws/operations';
  const spec = (action: RouteAction, summary: string, extra: Record<string, unknown> = {}) => ({
    action,
    summary,
    tag: 'rest-operations',
    ...extra,
  });
  return (routes) => {
    routes.get(
      upstreams,
      spec('upstream.list', "A workspace's upstreams (credentials by type only)"),
      async (req, res) => {
        const workspace = workspaceParam(req.params.ws);
        res.json(await listUpstreams(bus, principalOf(res), { workspace }));
      },
    );
    routes.get(`${upstreams}/:name`, spec('upstream.get', 'One upstream (never its credential)'), async (req, res) => {
      res.json(await getUpstream(bus, principalOf(res), upstreamRef(req)));
    });
    routes.put(
      `${upstreams}/:name`,
      spec('upstream.put', 'Create or replace an upstream; the credential is write-only and stored encrypted', {
        body: PutUpstreamSchema,
      }),
      async (req, res) => {
        const body = parseRequest(PutUpstreamSchema, req.body);
        const { created, ...view } = await putUpstream(bus, principalOf(res), { ...upstreamRef(req), ...body });
        res.status(created ? 201 : 200).json(view);
      },
    );
    routes.delete(
      `${upstreams}/:name`,
      spec('upstream.delete', 'Delete an upstream no operation uses', { status: 204 }),
      async (req, res) => {
        await deleteUpstream(bus, principalOf(res), upstreamRef(req));
        res.status(204).end();
      },
    );

    routes.get(operations, spec('operation.list', "A workspace's operations"), async (req, res) => {
      const workspace = workspaceParam(req.params.ws);
      res.json(await listOperations(bus, principalOf(res), { workspace }));
    });
    routes.post(
      operations,
      spec('operation.create', 'Create an operation (version 1 is a draft)', {
        body: CreateOperationSchema,
        status: 201,
      }),
      async (req, res) => {
        const workspace = workspaceParam(req.params.ws);
        const body = parseRequest(CreateOperationSchema, req.body);
        const { boundAgents: _b, ...operation } = await createOperation(bus, principalOf(res), { workspace, ...body });
        res.status(201).json(operation);
      },
    );
    routes.post(
      `${operations}/import`,
      spec('operation.import', 'Import an OpenAPI 3 document as draft operations of one upstream', {
        body: ImportSchema,
      }),
      async (req, res) => {
        const workspace = workspaceParam(req.params.ws);
        const body = parseRequest(ImportSchema, req.body);
        res.json(await importOperations(bus, principalOf(res), { workspace, ...body }));
      },
    );
    routes.get(
      `${operations}/:op`,
      spec('operation.get', 'One operation with its versions, newest first'),
      async (req, res) => {
        res.json(await getOperation(bus, principalOf(res), operationRef(req)));
      },
    );
    routes.patch(
      `${operations}/:op`,
      spec('operation.update', "Change an operation's title, description, or its current draft's spec", {
        body: PatchOperationSchema,
      }),
      async (req, res) => {
        const ref = operationRef(req);
        const body = parseRequest(PatchOperationSchema, req.body);
        const { boundAgents: _b, ...operation } = await updateOperation(
          bus,
          principalOf(res),
          { ...ref, ...body },
          announcing,
        );
        res.json(operation);
      },
    );
    routes.delete(
      `${operations}/:op`,
      spec('operation.delete', 'Delete an operation and its versions', { status: 204 }),
      async (req, res) => {
        await deleteOperation(bus, principalOf(res), operationRef(req), announcing);
        res.status(204).end();
      },
    );
    routes.post(
      `${operations}/:op/versions`,
      spec('operation.newVersion', 'Create a new draft version (its spec, else a copy of the latest)', {
        body: NewVersionSchema,
        status: 201,
      }),
      async (req, res) => {
        const body = parseRequest(NewVersionSchema, req.body);
        const { boundAgents: _b, ...operation } = await newOperationVersion(bus, principalOf(res), {
          ...operationRef(req),
          ...body,
        });
        res.status(201).json(operation);
      },
    );
    routes.post(
      `${operations}/:op/versions/:version/publish`,
      spec('operation.publish', 'Publish a draft version: agents bound to latest serve it at once, on every replica'),
      async (req, res) => {
        const ref = operationRef(req);
        const version = Number(req.params.version);
        if (!Number.isInteger(version) || version < 1)
          throw new DaguError('invalid_request', 'version: must be a positive integer', { field: 'version' });
        const { boundAgents: _b, ...operation } = await publishOperation(
          bus,
          principalOf(res),
          { ...ref, version },
          announcing,
        );
        res.json(operation);
      },
    );
  };
}
