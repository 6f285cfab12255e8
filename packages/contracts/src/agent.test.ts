import type { z } from 'zod';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import {
  AgentCreateRequestSchema,
  AgentSetToolsRequestSchema,
  AgentUpdateRequestSchema,
  bindingToolName,
  AgentBindingSchema,
} from './agent';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
describe('agent contracts', () => {
  const ref = { workspace: 'support', slug: 'helpdesk' };
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['create: minimal', AgentCreateRequestSchema, { ...ref, title: 'Helpdesk' }, null],
    ['create: slug with upper case', AgentCreateRequestSchema, { ...ref, slug: 'Help', title: 't' }, 'slug'],
    ['create: slug starting with -', AgentCreateRequestSchema, { ...ref, slug: '-a', title: 't' }, 'slug'],
    ['create: slug of 41 characters', AgentCreateRequestSchema, { ...ref, slug: 'a'.repeat(41), title: 't' }, 'slug'],
    ['create: workspace all', AgentCreateRequestSchema, { ...ref, workspace: 'all', title: 't' }, 'workspace'],
    ['create: blank title', AgentCreateRequestSchema, { ...ref, title: '  ' }, 'title'],
    ['create: unknown state', AgentCreateRequestSchema, { ...ref, title: 't', state: 'live' }, 'state'],
    ['update: state only', AgentUpdateRequestSchema, { ...ref, state: 'published' }, null],
    ['update: unknown field', AgentUpdateRequestSchema, { ...ref, owner: 'x' }, ''],
    ['tools: empty catalog', AgentSetToolsRequestSchema, { ...ref, tools: [] }, null],
    [
      'tools: a narrowed dagu_read',
      AgentSetToolsRequestSchema,
      { ...ref, tools: [{ kind: 'dagu_tool', tool: 'dagu_read', restrictions: { targets: ['dag'] } }] },
      null,
    ],
    [
      'tools: an unknown kind',
      AgentSetToolsRequestSchema,
      { ...ref, tools: [{ kind: 'webhook', operation: 'x' }] },
      'tools.0.kind',
    ],
    [
      'tools: an unknown Dagu tool',
      AgentSetToolsRequestSchema,
      { ...ref, tools: [{ kind: 'dagu_tool', tool: 'dagu_admin' }] },
      'tools.0.tool',
    ],
    [
      'tools: an unknown restriction',
      AgentSetToolsRequestSchema,
      { ...ref, tools: [{ kind: 'dagu_tool', tool: 'dagu_read', restrictions: { users: ['x'] } }] },
      'tools.0.restrictions',
    ],
    [
      'tools: an empty restriction list',
      AgentSetToolsRequestSchema,
      { ...ref, tools: [{ kind: 'dagu_tool', tool: 'dagu_execute', restrictions: { actions: [] } }] },
      'tools.0.restrictions.actions',
    ],
    [
      'tools: a tool name with a space',
      AgentSetToolsRequestSchema,
      { ...ref, tools: [{ kind: 'dag', dag: 'refund', name: 'refund it' }] },
      'tools.0.name',
    ],
    [
      'tools: waitSeconds over 300',
      AgentSetToolsRequestSchema,
      { ...ref, tools: [{ kind: 'dag', dag: 'refund', waitSeconds: 301 }] },
      'tools.0.waitSeconds',
    ],
  ];
  it.each(cases)('%s', (_name, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });

  it('names a tool by its binding: name, else the Dagu tool, else the DAG', () => {
    const parse = (v: unknown) => AgentBindingSchema.parse(v);
    expect(bindingToolName(parse({ kind: 'dag', dag: 'refund' }))).toBe('refund');
    expect(bindingToolName(parse({ kind: 'dag', dag: 'refund', name: 'refund_order' }))).toBe('refund_order');
    expect(bindingToolName(parse({ kind: 'dagu_tool', tool: 'dagu_read' }))).toBe('dagu_read');
  });
});

describe('extension_tool bindings', () => {
  const ref = { workspace: 'support', slug: 'helpdesk' };
  const tools = (binding: Record<string, unknown>) => ({ ...ref, tools: [{ kind: 'extension_tool', ...binding }] });
  const cases: Array<[string, unknown, string | null]> = [
    ['minimal', tools({ service: 'greeter', tool: 'hello' }), null],
    ['named and titled', tools({ service: 'greeter', tool: 'hello', name: 'greet', title: 'Greet' }), null],
    ['a service name with upper case', tools({ service: 'Greeter', tool: 'hello' }), 'tools.0.service'],
    ['a namespaced tool (a dot)', tools({ service: 'greeter', tool: 'greeter.hello' }), 'tools.0.tool'],
    ['an unknown field', tools({ service: 'greeter', tool: 'hello', minRole: 'viewer' }), 'tools.0'],
    [
      'service.tool over 64 characters without a name',
      tools({ service: 's'.repeat(40), tool: 't'.repeat(30) }),
      'tools.0.name',
    ],
    [
      'service.tool over 64 characters with a name',
      tools({ service: 's'.repeat(40), tool: 't'.repeat(30), name: 'st' }),
      null,
    ],
  ];
  it.each(cases)('%s', (_name, value, path) => {
    expect(firstErrorPath(AgentSetToolsRequestSchema, value)).toBe(path);
  });

  it('names the tool <service>.<tool> unless the binding names it', () => {
    const parse = (v: unknown) => AgentBindingSchema.parse(v);
    expect(bindingToolName(parse({ kind: 'extension_tool', service: 'greeter', tool: 'hello' }))).toBe('greeter.hello');
    expect(bindingToolName(parse({ kind: 'extension_tool', service: 'greeter', tool: 'hello', name: 'hi' }))).toBe(
      'hi',
    );
  });
});
