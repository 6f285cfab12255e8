import type { Request } from 'express';
import { z } from 'zod';
import { DaguError, ProfileNameSchema, ProfileVariableInputSchema, isValidWikiWorkspace } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { deleteProfile, getProfile, listProfiles, putProfile, setDefaultProfile } from '../actions/profile.actions';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { parseRequest } from './parse-body';

/**
 * Runtime profiles over REST (Dagu spec 022b "Runtime profiles", "Profiles:
 * wire details"), owned by run-service, each route one action of
 * actions/profile.actions.ts: list and read (operator and up: an
 * operator chooses among profiles when starting a run), write, delete and the
 * workspace default (manager and up). A read shows a secret variable as
 * `{secret: true}` without its value; a `PUT` entry `{secret: true}` without
 * a value keeps the stored one. The service's input faults are 400
 * `invalid_request` on their field (http/rest-errors.ts).
 */

const PutProfileBodySchema = z.strictObject({
  env: z
    .record(z.string(), ProfileVariableInputSchema)
    .describe('Variables by name: {value, secret?}; {secret: true} alone keeps a stored secret.'),
});
const DefaultBodySchema = z.strictObject({
  profile: ProfileNameSchema.nullable().describe('The default profile of the workspace, or null for none.'),
});

/** The `{workspace}` of the URL. @throws DaguError `invalid_request` */
function workspaceOf(req: Request): string {
  const workspace = String(req.params.workspace);
  if (workspace === 'all' || !isValidWikiWorkspace(workspace))
    throw new DaguError('invalid_request', 'workspace: not a valid workspace name', { field: 'workspace' });
  return workspace;
}

/** The `{profile}` of the URL. @throws DaguError `invalid_request` */
function profileOf(req: Request): string {
  const parsed = ProfileNameSchema.safeParse(String(req.params.profile));
  if (!parsed.success)
    throw new DaguError('invalid_request', 'profile: must match ^[a-z0-9][a-z0-9._-]*$, at most 40 characters', {
      field: 'profile',
    });
  return parsed.data;
}

/** Builds the runtime-profile route module on the gateway's bus client. */
export function profileRoutes(bus: BusClient): RestRoutes {
  const PROFILE = '/workspaces/:workspace/profiles/:profile';
  return (routes) => {
    routes.get(
      '/workspaces/:workspace/profiles',
      { action: 'profile.list', summary: 'List runtime profiles: names, variable names, the default', tag: 'profiles' },
      async (req, res) => {
        res.json(await listProfiles(bus, principalOf(res), { workspace: workspaceOf(req) }));
      },
    );
    routes.get(
      PROFILE,
      { action: 'profile.get', summary: 'Read one runtime profile (secret values are never shown)', tag: 'profiles' },
      async (req, res) => {
        const ref = { workspace: workspaceOf(req), profile: profileOf(req) };
        res.json(await getProfile(bus, principalOf(res), ref));
      },
    );
    routes.put(
      PROFILE,
      {
        action: 'profile.put',
        summary: 'Create or replace a runtime profile',
        tag: 'profiles',
        body: PutProfileBodySchema,
      },
      async (req, res) => {
        const ref = { workspace: workspaceOf(req), profile: profileOf(req) };
        const body = parseRequest(PutProfileBodySchema, req.body);
        const reply = await putProfile(bus, principalOf(res), { ...ref, env: body.env });
        const { created, ...view } = reply;
        res.status(created ? 201 : 200).json({ ...view, created });
      },
    );
    routes.delete(
      PROFILE,
      { action: 'profile.delete', summary: 'Delete a runtime profile', tag: 'profiles', status: 204 },
      async (req, res) => {
        const ref = { workspace: workspaceOf(req), profile: profileOf(req) };
        await deleteProfile(bus, principalOf(res), ref);
        res.status(204).end();
      },
    );
    routes.put(
      '/workspaces/:workspace/default-profile',
      {
        action: 'profile.setDefault',
        summary: "Set or clear the workspace's default runtime profile",
        tag: 'profiles',
        body: DefaultBodySchema,
      },
      async (req, res) => {
        const body = parseRequest(DefaultBodySchema, req.body);
        const payload = { workspace: workspaceOf(req), profile: body.profile };
        res.json(await setDefaultProfile(bus, principalOf(res), payload));
      },
    );
  };
}
