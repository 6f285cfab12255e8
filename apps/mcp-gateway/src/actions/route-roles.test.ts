import { OP_CATALOGS, requiredRoleOf, RoleSchema, type OpName } from '@dagu-mcp/contracts';
import { accessOf, LOCAL_ROUTE_ROLES, type RouteAction } from './route-roles';

describe('who may call a REST route (each role is written once)', () => {
  const opNames = new Set(Object.values(OP_CATALOGS).flatMap((catalog) => Object.keys(catalog)));

  it('a route that serves a bus op takes the role of the op in its catalog', () => {
    for (const op of opNames) expect([op, accessOf(op as OpName)]).toEqual([op, requiredRoleOf(op as OpName)]);
    expect(accessOf('run.start')).toBe('operator');
    expect(accessOf('wiki.put')).toBe('developer');
    expect(accessOf('agent.get')).toBe('manager');
  });

  it('a gateway-local route is in the one local table, under a name no op has, with a role or public', () => {
    for (const [name, access] of Object.entries(LOCAL_ROUTE_ROLES)) {
      expect([name, opNames.has(name)]).toEqual([name, false]);
      expect([name, access === 'public' || RoleSchema.safeParse(access).success]).toEqual([name, true]);
      expect(accessOf(name as RouteAction)).toBe(access);
    }
    expect(accessOf('users.list')).toBe('admin');
    expect(accessOf('meta.health')).toBe('public');
  });

  it('a route naming neither an op nor a local route is a programming fault, not a silent default', () => {
    expect(() => accessOf('users.nothing' as RouteAction)).toThrow('No op users.nothing');
  });
});
