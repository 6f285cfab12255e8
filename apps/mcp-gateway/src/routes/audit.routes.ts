import { z } from 'zod';
import type { Pool, ReadRouter } from '@dagu-mcp/runtime';
import { queryAudit } from '../audit/audit.repository';
import type { RestRoutes } from '../http/rest-router';
import { parseRequest } from './parse-body';

const AuditQuerySchema = z.strictObject({
  category: z.string().min(1).optional(),
  action: z.string().min(1).optional(),
  actor: z.string().min(1).optional(),
  outcome: z.enum(['received', 'succeeded', 'failed', 'denied']).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,24}$/)
    .refine((c) => /^\d+$/.test(Buffer.from(c, 'base64url').toString('utf8')), 'malformed cursor')
    .optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

/**
 * `GET /api/v1/audit` (admin): the audit trail, newest first, with filters and an opaque `nextCursor`.
 * With `deps.reads`, served by the read replica while it is within the lag bound: the
 * trail is written off the request path (audit/audit-log.ts), so a listing never promised the
 * caller's latest action, and no caller's writes are waited for.
 */
export function auditRoutes(deps: { pool: Pool; reads?: ReadRouter | undefined }): RestRoutes {
  return (routes) => {
    routes.get(
      '/audit',
      { action: 'audit.list', summary: 'The audit trail, newest first', tag: 'audit', query: AuditQuerySchema },
      async (req, res) => {
        const query = parseRequest(AuditQuerySchema, req.query);
        const reads = deps.reads;
        res.json(
          reads === undefined
            ? await queryAudit(deps.pool, query)
            : await reads.read(undefined, (db) => queryAudit(db, query)),
        );
      },
    );
  };
}
