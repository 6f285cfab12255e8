import {
  DaguError,
  ExtensionNameSchema,
  ExtensionSettingsSchema,
  type ExtensionCatalog,
  type ExtensionSettings,
} from '@dagu-mcp/contracts';
import type { AuditLog } from '../audit/audit-log';
import { principalOf } from '../http/principal';
import { requestIdOf } from '../http/request-id';
import type { RestRoutes } from '../http/rest-router';
import type { ExtensionDirectory } from '../mcp/extensions/extension-directory';
import type { ExtensionSettingsStore, ServedExtensions } from '../mcp/extensions/extension-settings';
import { parseRequest } from './parse-body';

/** Where an extension's serving is decided: a test fixture, the static list, an admin's switch, or nowhere yet. */
type ExtensionSource = 'fixture' | 'static' | 'switch' | 'none';

/**
 * What an admin sees of one extension: `served` (on and announcing), `not_running` (on, not
 * announcing), `available` (announcing, never enabled or switched off: what there is to
 * enable), `disabled` (switched off, not announcing), `malformed` (announcing a catalog the
 * gateway cannot read).
 */
type ExtensionState = 'served' | 'not_running' | 'available' | 'disabled' | 'malformed';

/** One row of `GET /extensions`. */
function extensionView(
  name: string,
  source: ExtensionSource,
  settings: ExtensionSettings | undefined,
  announced: boolean,
  catalog: ExtensionCatalog | undefined,
): Record<string, unknown> {
  const enabled = source === 'fixture' || source === 'static' || settings?.enabled === true;
  const state: ExtensionState =
    announced && catalog === undefined
      ? 'malformed'
      : enabled
        ? announced
          ? 'served'
          : 'not_running'
        : announced
          ? 'available'
          : 'disabled';
  return {
    name,
    source,
    enabled,
    ...(settings?.allowedTools !== undefined ? { allowedTools: settings.allowedTools } : {}),
    static: source === 'static' || source === 'fixture',
    announced,
    state,
    // The announced catalog, own names: what `allowedTools` may list.
    ...(catalog !== undefined
      ? {
          tools: catalog.tools.map((t) => ({
            name: t.name,
            ...(t.title !== undefined ? { title: t.title } : {}),
            minRole: t.minRole ?? 'viewer',
          })),
          prompts: catalog.prompts.map((p) => p.name),
          resources: catalog.resources.length + catalog.resourceTemplates.length,
          uriPrefixes: catalog.uriPrefixes,
        }
      : {}),
  };
}

/**
 * Extension switches, admin only: `GET /extensions` lists every extension
 * the gateway knows of — the test fixtures and static `MCP_EXTENSIONS` names, the stored
 * switches, and every service announcing a catalog now even if nobody enabled it — each with
 * its state and announced tools; `PUT /extensions/{name}` with `{enabled, allowedTools?}`
 * stores one (audited `extension.updated`). Every gateway replica serves the change within
 * about a second, and live MCP sessions get `notifications/tools/list_changed`.
 */
export function extensionRoutes(deps: {
  store: ExtensionSettingsStore;
  served: ServedExtensions;
  staticNames: readonly string[];
  fixtureNames: readonly string[];
  directory: ExtensionDirectory;
  audit: AuditLog;
}): RestRoutes {
  return (routes) => {
    routes.get(
      '/extensions',
      {
        action: 'extensions.list',
        summary: 'List extensions: configured, switched, and announcing',
        tag: 'extensions',
      },
      async (_req, res) => {
        const [stored, announced] = await Promise.all([deps.store.list(), deps.directory.announced()]);
        const sourceOf = (name: string): ExtensionSource =>
          deps.fixtureNames.includes(name)
            ? 'fixture'
            : deps.staticNames.includes(name)
              ? 'static'
              : stored.has(name)
                ? 'switch'
                : 'none';
        const names = [
          ...new Set([...deps.fixtureNames, ...deps.staticNames, ...stored.keys(), ...announced.keys()]),
        ].sort();
        res.json({
          items: names.map((name) =>
            extensionView(
              name,
              sourceOf(name),
              sourceOf(name) === 'switch' ? stored.get(name) : undefined,
              announced.has(name),
              announced.get(name),
            ),
          ),
          static: deps.staticNames,
          fixtures: deps.fixtureNames,
        });
      },
    );
    routes.put(
      '/extensions/:name',
      {
        action: 'extensions.update',
        summary: 'Enable or disable an extension service and choose its tools',
        tag: 'extensions',
        body: ExtensionSettingsSchema,
      },
      async (req, res) => {
        const name = ExtensionNameSchema.safeParse(req.params.name);
        if (!name.success)
          throw new DaguError('invalid_request', `name: ${name.error.issues[0]?.message ?? 'invalid'}`, {
            field: 'name',
          });
        if (deps.staticNames.includes(name.data) || deps.fixtureNames.includes(name.data))
          throw new DaguError(
            'conflict',
            `Extension ${name.data} is served from the configuration (MCP_EXTENSIONS); change the config.`,
          );
        const settings = parseRequest(ExtensionSettingsSchema, req.body);
        await deps.store.put(name.data, settings);
        deps.served.invalidate();
        deps.audit.record({
          category: 'extension',
          action: 'extension.updated',
          principal: principalOf(res),
          target: name.data,
          outcome: 'succeeded',
          requestId: requestIdOf(res),
          details: { ...settings },
        });
        res.json({ name: name.data, ...settings });
      },
    );
  };
}
