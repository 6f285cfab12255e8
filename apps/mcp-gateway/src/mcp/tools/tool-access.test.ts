import { RoleSchema, roleAtLeast, type Principal, type Role } from '@dagu-mcp/contracts';
import { capScopes, OAUTH_SCOPES, SCOPE_MIN_ROLE } from '../../oauth/scopes';
import { TOOL_DEFINITIONS } from './tool-definitions';
import { offersTool, TOOL_ACTIONS } from './tool-access';

const who = (role: Role, scopes?: string[]): Principal => ({
  id: `user:${role}`,
  subject: role,
  role,
  credentialType: scopes === undefined ? 'api_key' : 'oauth',
  ...(scopes !== undefined ? { scopes } : {}),
});
const offered = (principal: Principal): string[] =>
  TOOL_DEFINITIONS.map((t) => t.name).filter((name) => offersTool(principal, name));

// Tools/list offers what the role, capped by an OAuth token's scopes, can use.
describe('offersTool', () => {
  it.each([
    ['viewer', ['dagu_read', 'dagu_change']],
    ['operator', ['dagu_read', 'dagu_change', 'dagu_execute']],
    ['developer', ['dagu_read', 'dagu_change', 'dagu_execute']],
    ['admin', ['dagu_read', 'dagu_change', 'dagu_execute']],
  ] as const)('a %s with any unscoped credential sees %j', (role, tools) => {
    expect(offered(who(role))).toEqual(tools);
  });

  it.each([
    ['viewer', ['dagu:read'], ['dagu_read', 'dagu_change']],
    ['developer', ['dagu:read'], ['dagu_read', 'dagu_change']],
    ['developer', ['dagu:read', 'dagu:change'], ['dagu_read', 'dagu_change']],
    ['developer', ['dagu:read', 'dagu:execute'], ['dagu_read', 'dagu_change', 'dagu_execute']],
    ['operator', ['dagu:execute'], ['dagu_execute']],
    ['admin', [], []],
  ] as const)('a %s whose token holds %j sees %j', (role, scopes, tools) => {
    expect(offered(who(role, [...scopes]))).toEqual(tools);
  });

  it('offers names that are not the gateway tools', () => {
    expect(offersTool(who('viewer', []), 'greeter.hello')).toBe(true);
  });
});

// What makes the step-up rule safe (http/oauth-scope.middleware.ts): the lowest role that may hold
// a scope is the lowest role of the actions it gates. A role that may hold it can use it (a step-up
// is never futile); a role below can use none of them (letting its call through to the tool grants
// nothing the scope would have gated).
describe('scopes and tool actions', () => {
  it.each(OAUTH_SCOPES)('%s: its lowest role is the lowest role of its actions', (scope) => {
    const roles = Object.values(TOOL_ACTIONS)
      .flat()
      .filter((a) => a.scope === scope)
      .map((a) => a.role);
    expect(roles.length).toBeGreaterThan(0);
    const lowest = RoleSchema.options.filter((r) => roles.some((need) => roleAtLeast(r, need))).at(-1);
    expect(lowest).toBe(SCOPE_MIN_ROLE[scope]);
  });

  it.each(RoleSchema.options)('a %s below a scope can do none of its actions', (role) => {
    for (const action of Object.values(TOOL_ACTIONS).flat()) {
      if (capScopes([action.scope], role).length === 0) expect(roleAtLeast(role, action.role)).toBe(false);
    }
  });
});
