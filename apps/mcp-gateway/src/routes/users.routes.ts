import type { Response } from 'express';
import { z } from 'zod';
import { DaguError, RoleSchema } from '@dagu-mcp/contracts';
import type { AuditLog } from '../audit/audit-log';
import { hashPassword } from '../auth/password';
import type { UserRepository } from '../auth/user.repository';
import type { LoginSessions } from '../auth/login-sessions';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';
import { parseRequest } from './parse-body';
import { uuidParam } from './path-params';
import { requestIdOf } from '../http/request-id';

const Username = z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'letters, digits, "_", ".", "@" or "-", at most 64');
const Password = z.string().min(8, 'at least 8 characters').max(1000);
const CreateUserSchema = z.strictObject({ username: Username, password: Password, role: RoleSchema });
const UpdateUserSchema = z.strictObject({ password: Password.optional(), role: RoleSchema.optional() });

/** Users (builtin mode), admin only (dagu-model §9): `GET/POST /users`, `GET/PATCH/DELETE /users/{id}`. */
export function userRoutes(deps: { users: UserRepository; sessions: LoginSessions; audit: AuditLog }): RestRoutes {
  const audit = (res: Response, action: string, target: string): void =>
    deps.audit.record({
      category: 'user',
      action,
      principal: principalOf(res),
      target,
      outcome: 'succeeded',
      requestId: requestIdOf(res),
    });
  return (routes) => {
    routes.get('/users', { action: 'users.list', summary: 'List users', tag: 'users' }, async (_req, res) => {
      res.json({ items: await deps.users.list() });
    });
    routes.post(
      '/users',
      { action: 'users.create', summary: 'Create a user', tag: 'users', body: CreateUserSchema, status: 201 },
      async (req, res) => {
        const input = parseRequest(CreateUserSchema, req.body);
        const user = await deps.users.create({
          username: input.username,
          role: input.role,
          passwordHash: await hashPassword(input.password),
        });
        audit(res, 'user.created', user.username);
        res.status(201).json(user);
      },
    );
    routes.get('/users/:id', { action: 'users.get', summary: 'Get a user', tag: 'users' }, async (req, res) => {
      const user = await deps.users.findById(uuidParam(req.params.id, 'id'));
      if (user === undefined) throw new DaguError('resource_not_found', 'User not found.');
      res.json(user);
    });
    routes.patch(
      '/users/:id',
      { action: 'users.update', summary: "Change a user's role or password", tag: 'users', body: UpdateUserSchema },
      async (req, res) => {
        const change = parseRequest(UpdateUserSchema, req.body);
        const user = await deps.users.update(uuidParam(req.params.id, 'id'), {
          ...(change.role !== undefined ? { role: change.role } : {}),
          ...(change.password !== undefined ? { passwordHash: await hashPassword(change.password) } : {}),
        });
        if (user === undefined) throw new DaguError('resource_not_found', 'User not found.');
        // Every replica reads the user again: a demotion or new password ends the old tokens' effect.
        await deps.sessions.userChanged(user.id);
        audit(res, 'user.updated', user.username);
        res.json(user);
      },
    );
    routes.delete(
      '/users/:id',
      { action: 'users.delete', summary: 'Delete a user', tag: 'users', status: 204 },
      async (req, res) => {
        const id = uuidParam(req.params.id, 'id');
        if (!(await deps.users.delete(id))) throw new DaguError('resource_not_found', 'User not found.');
        await deps.sessions.userChanged(id);
        audit(res, 'user.deleted', id);
        res.status(204).end();
      },
    );
  };
}
