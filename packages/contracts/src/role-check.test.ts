import { DaguError } from './errors';
import { OP_CATALOGS } from './ops';
import {
  MUTATION_ROLES,
  READ_ROLES,
  requireMutationRole,
  requireOpRole,
  requiredRoleOf,
  type MutationName,
} from './role-check';
import type { Principal, Role } from './principal';

const as = (role: Role): Principal => ({ id: `u-${role}`, subject: role, role, credentialType: 'api_key' });

describe('requireMutationRole (dagu-model §9)', () => {
  it.each([
    ['dag.upsert', 'operator', false],
    ['dag.upsert', 'developer', true],
    ['dag.delete', 'viewer', false],
    ['dag.setSuspended', 'operator', false],
    ['run.start', 'viewer', false],
    ['run.start', 'operator', true],
    ['run.start.inline', 'operator', false],
    ['run.start.inline', 'developer', true],
    ['run.stop', 'operator', true],
    ['run.retry', 'viewer', false],
    ['run.approval', 'operator', true],
    ['run.humanTask', 'viewer', false],
    ['wiki.put', 'operator', false],
    ['wiki.delete', 'admin', true],
    ['agent.setTools', 'developer', false],
    ['agent.create', 'manager', true],
    ['upstream.put', 'operator', false],
    ['operation.publish', 'manager', true],
  ] as const)('%s as %s: allowed %s', (mutation: MutationName, role: Role, allowed: boolean) => {
    const check = () => requireMutationRole(as(role), mutation);
    if (allowed) expect(check).not.toThrow();
    else expect(check).toThrow(expect.objectContaining({ code: 'unauthorized' }) as DaguError);
  });

  it('names every mutation op of the catalogs, each with developer, operator or (profile values, agents, REST operations) manager', () => {
    const mutations = Object.values(OP_CATALOGS).flatMap((catalog) =>
      Object.entries(catalog)
        .filter(([, op]) => op.mutation === true)
        .map(([name]) => name),
    );
    expect(mutations.filter((name) => !(name in MUTATION_ROLES))).toEqual([]);
    const managed = ['profile.put', 'profile.delete', 'profile.setDefault'];
    for (const [mutation, role] of Object.entries(MUTATION_ROLES))
      expect([mutation, role]).toEqual([
        mutation,
        managed.includes(mutation) ||
        mutation.startsWith('agent.') ||
        mutation.startsWith('upstream.') ||
        (mutation.startsWith('operation.') && mutation !== 'operation.call')
          ? 'manager'
          : expect.stringMatching(/^(developer|operator)$/),
      ]);
  });
});

describe('the role lives on the op', () => {
  const ops = Object.values(OP_CATALOGS).flatMap((catalog) => Object.entries(catalog));

  it('every op of every catalog declares its role', () => {
    expect(ops.filter(([, op]) => !('role' in op) || op.role === undefined).map(([name]) => name)).toEqual([]);
  });

  it('derives the role tables from the catalogs', () => {
    for (const [name, op] of ops) {
      if (op.mutation) expect([name, MUTATION_ROLES[name]]).toEqual([name, op.role]);
      else expect([name, READ_ROLES[name]]).toEqual([name, op.role === 'viewer' ? undefined : op.role]);
    }
    expect(READ_ROLES['run.workbook']).toBe('developer');
    expect(READ_ROLES['operation.call']).toBe('operator');
  });

  it('asks roleFor when the role depends on the request: an inline start is authoring', () => {
    expect(requiredRoleOf('run.start')).toBe('operator');
    expect(requiredRoleOf('run.start', { inline: false })).toBe('operator');
    expect(requiredRoleOf('run.start', { inline: true })).toBe('developer');
    expect(MUTATION_ROLES['run.start.inline']).toBe('developer');
  });

  it.each([
    ['operation.call', 'viewer', false],
    ['operation.call', 'operator', true],
    ['agent.get', 'developer', false],
    ['agent.get', 'manager', true],
    ['profile.list', 'viewer', false],
    ['profile.list', 'operator', true],
    ['run.list', 'viewer', true],
  ] as const)('requireOpRole %s as %s: allowed %s', (op, role, allowed) => {
    const check = () => requireOpRole(as(role), op);
    if (allowed) expect(check).not.toThrow();
    else expect(check).toThrow(expect.objectContaining({ code: 'unauthorized' }) as DaguError);
  });

  it('refuses an op that is in no catalog (a programming fault)', () => {
    expect(() => requiredRoleOf('dag.nothing' as never)).toThrow('No op dag.nothing');
  });
});
