import type { Response } from 'express';
import { z } from 'zod';
import { DaguError, RoleSchema } from '@dagu-mcp/contracts';
import type { AuditLog } from '../audit/audit-log';
import type { ApiKeyRecord, ApiKeyRepository } from '../auth/api-key.repository';
import type { ApiKeyVerifier } from '../auth/api-key-cache';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { parseRequest } from './parse-body';
import { uuidParam } from './path-params';
import { requestIdOf } from '../http/request-id';

const CreateKeySchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
  role: RoleSchema,
  surfaces: z
    .array(z.enum(['mcp', 'rest_api']))
    .min(1, 'at least one surface')
    .transform((s) => [...new Set(s)]),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});

function view(record: ApiKeyRecord): Record<string, unknown> {
  return {
    id: record.id,
    prefix: record.prefix,
    name: record.name,
    role: record.role,
    surfaces: record.surfaces,
    expiresAt: record.expiresAt,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt,
  };
}

/**
 * API keys, admin only: `POST /api-keys` → 201 with the key (shown only
 * here), `GET /api-keys`, `DELETE /api-keys/{id}` → 204. A revocation reaches
 * every gateway replica at once (`ApiKeyVerifier.invalidate`).
 */
export function apiKeyRoutes(deps: { keys: ApiKeyRepository; verifier: ApiKeyVerifier; audit: AuditLog }): RestRoutes {
  const audit = (res: Response, action: string, target: string): void =>
    deps.audit.record({
      category: 'api_key',
      action,
      principal: principalOf(res),
      target,
      outcome: 'succeeded',
      requestId: requestIdOf(res),
    });
  return (routes) => {
    routes.post(
      '/api-keys',
      {
        action: 'apiKeys.create',
        summary: 'Create an API key (the key is shown only in this response)',
        tag: 'api-keys',
        body: CreateKeySchema,
        status: 201,
      },
      async (req, res) => {
        const input = parseRequest(CreateKeySchema, req.body);
        const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
        if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
          throw new DaguError('invalid_request', 'expiresAt: must be in the future', { field: 'expiresAt' });
        }
        const { record, key } = await deps.keys.create({
          name: input.name,
          role: input.role,
          surfaces: input.surfaces,
          expiresAt,
          createdBy: principalOf(res).subject,
        });
        audit(res, 'api_key.created', record.id);
        const { lastUsedAt: _unused, ...shown } = view(record);
        res.status(201).json({ ...shown, key });
      },
    );
    routes.get(
      '/api-keys',
      { action: 'apiKeys.list', summary: 'List live API keys', tag: 'api-keys' },
      async (_req, res) => {
        res.json({ items: (await deps.keys.list()).map(view) });
      },
    );
    routes.delete(
      '/api-keys/:id',
      { action: 'apiKeys.revoke', summary: 'Revoke an API key on every replica at once', tag: 'api-keys', status: 204 },
      async (req, res) => {
        const id = uuidParam(req.params.id, 'id');
        const prefix = await deps.keys.revoke(id);
        if (prefix === undefined) throw new DaguError('resource_not_found', 'API key not found.');
        await deps.verifier.invalidate(prefix);
        audit(res, 'api_key.revoked', id);
        res.status(204).end();
      },
    );
  };
}
