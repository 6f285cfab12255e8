import { DaguError, ExtensionNameSchema, ExtensionSettingsSchema } from '@dagu-mcp/contracts';
import type { AuditLog } from '../audit/audit-log';
import { principalOf } from '../http/principal';
import { requestIdOf } from '../http/request-id';
import type { RestRoutes } from '../http/rest-router';
import type { ExtensionSettingsStore, ServedExtensions } from '../mcp/extensions/extension-settings';
import { parseRequest } from './parse-body';

/**
 * Extension switches (issue 29 item 2), admin only: `GET /extensions` lists the stored
 * switches and the static `MCP_EXTENSIONS` names; `PUT /extensions/{name}` with
 * `{enabled, allowedTools?}` stores one (audited `extension.updated`). Every gateway replica
 * serves the change within about a second, and live MCP sessions get
 * `notifications/tools/list_changed`.
 */
export function extensionRoutes(deps: {
  store: ExtensionSettingsStore;
  served: ServedExtensions;
  staticNames: readonly string[];
  audit: AuditLog;
}): RestRoutes {
  return (routes) => {
    routes.get(
      '/extensions',
      { access: 'admin', summary: 'List extension switches', tag: 'extensions' },
      async (_req, res) => {
        const stored = await deps.store.list();
        res.json({
          items: [...stored].map(([name, s]) => ({ name, ...s, static: deps.staticNames.includes(name) })),
          static: deps.staticNames,
        });
      },
    );
    routes.put(
      '/extensions/:name',
      {
        access: 'admin',
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
        if (deps.staticNames.includes(name.data))
          throw new DaguError('conflict', `Extension ${name.data} is served from MCP_EXTENSIONS; change the config.`);
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
