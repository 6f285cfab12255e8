import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import { DaguError, DagListRequestSchema, isValidDagName } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { deleteDag, setDagSuspended, upsertDag, validateDag } from '../actions/dag.actions';
import { getDag, getDagSpec, listDags } from '../actions/dag-reads.actions';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { parseRequest, runParser } from './parse-body';

const DagListQuerySchema = z.strictObject({
  page: z.coerce.number().int().min(1).optional(),
  perPage: z.coerce.number().int().min(1).max(200).optional(),
  name: z.string().min(1).optional(),
  labels: z
    .string()
    .min(1)
    .transform((v) => v.split(',').map((l) => l.trim()))
    .pipe(z.array(z.string().min(1)))
    .optional(),
  sort: z.enum(['name', 'nextRun']).optional(),
  order: z.enum(['asc', 'desc']).optional(),
});
const SpecBodySchema = z.strictObject({ spec: z.string().refine((s) => s.trim() !== '', 'must not be empty') });
/** Content types whose body is the DAG's YAML itself (`PUT /dags/{name}`, `POST /dags/{name}/validate`). */
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];
/** Largest YAML body, bytes: the gateway's default body limit (dag-service bounds the spec itself). */
const YAML_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
const yamlBody = express.text({ type: YAML_TYPES, limit: YAML_BODY_LIMIT_BYTES });

/**
 * The YAML spec of a DAG write: an `application/yaml` (or `text/yaml`) body as is, else the
 * `spec` of a JSON body `{spec}` (docs/rest-api.md "DAGs").
 * @throws DaguError `invalid_request` on `spec` (empty YAML) or on the JSON body's first bad field;
 *   body-parser errors (413 past the limit) are rethrown for the REST error handler
 */
async function readSpec(req: Request, res: Response): Promise<string> {
  if (typeof req.is(YAML_TYPES) === 'string') {
    await runParser(yamlBody, req, res);
    const body: unknown = req.body;
    if (typeof body !== 'string' || body.trim() === '')
      throw new DaguError('invalid_request', 'spec: the YAML body must not be empty', { field: 'spec' });
    return body;
  }
  return parseRequest(SpecBodySchema, req.body).spec;
}

/** The DAG name of a path, checked per dagu-model §2. */
export function dagNameParam(value: unknown): string {
  const name = String(value);
  if (!isValidDagName(name))
    throw new DaguError('invalid_request', `Not a valid DAG name: ${name}.`, { field: 'name' });
  return name;
}

/**
 * DAG routes, each one action (actions/dag.actions.ts, dag-reads.actions.ts):
 * list, get, spec, validate (any role), put, delete, suspend/resume
 * (developer and up, dagu-model §9). Deleting a DAG leaves its runs running
 * and readable (`deleteDag`, not 022b's `deleteIdleDag`).
 */
export function dagRoutes(bus: BusClient): RestRoutes {
  return (routes) => {
    routes.get(
      '/dags',
      { action: 'dag.list', summary: 'List DAGs (the 021 `dags` query)', tag: 'dags', query: DagListQuerySchema },
      async (req, res) => {
        const query = DagListRequestSchema.parse(parseRequest(DagListQuerySchema, req.query));
        res.json(await listDags(bus, principalOf(res), query));
      },
    );
    routes.get('/dags/:name', { action: 'dag.get', summary: 'The DAG detail model', tag: 'dags' }, async (req, res) => {
      res.json(await getDag(bus, principalOf(res), { name: dagNameParam(req.params.name) }));
    });
    routes.get(
      '/dags/:name/spec',
      { action: 'dag.spec', summary: 'The stored YAML and its validation errors', tag: 'dags' },
      async (req, res) => {
        res.json(await getDagSpec(bus, principalOf(res), { name: dagNameParam(req.params.name) }));
      },
    );
    routes.post(
      '/dags/:name/validate',
      {
        action: 'dag.validate',
        summary: 'Validate a YAML spec without writing it (JSON `{spec}` or an `application/yaml` body)',
        tag: 'dags',
        body: SpecBodySchema,
      },
      async (req, res) => {
        const spec = await readSpec(req, res);
        res.json(await validateDag(bus, principalOf(res), { name: dagNameParam(req.params.name), spec }));
      },
    );
    routes.put(
      '/dags/:name',
      {
        action: 'dag.upsert',
        summary:
          'Create or update a DAG: JSON `{spec}` or an `application/yaml` body (400 with details.errors when invalid)',
        tag: 'dags',
        body: SpecBodySchema,
      },
      async (req, res) => {
        const spec = await readSpec(req, res);
        const reply = await upsertDag(bus, principalOf(res), { name: dagNameParam(req.params.name), spec });
        if (!reply.valid)
          throw new DaguError('invalid_request', 'The DAG spec is not valid; nothing was written.', {
            field: 'spec',
            details: { errors: reply.errors },
          });
        res.status(reply.created === true ? 201 : 200).json(reply);
      },
    );
    routes.delete(
      '/dags/:name',
      { action: 'dag.delete', summary: 'Delete a DAG (its runs stay readable)', tag: 'dags', status: 204 },
      async (req, res) => {
        await deleteDag(bus, principalOf(res), { name: dagNameParam(req.params.name) });
        res.status(204).end();
      },
    );
    for (const [action, suspended] of [
      ['suspend', true],
      ['resume', false],
    ] as const) {
      routes.post(
        `/dags/:name/${action}`,
        {
          action: 'dag.setSuspended',
          summary: `${action === 'suspend' ? 'Suspend' : 'Resume'} a DAG's schedule`,
          tag: 'dags',
        },
        async (req, res) => {
          res.json(await setDagSuspended(bus, principalOf(res), { name: dagNameParam(req.params.name), suspended }));
        },
      );
    }
  };
}
