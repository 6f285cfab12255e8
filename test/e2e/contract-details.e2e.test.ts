/**
 * The contract details of dagu-model §10 (issue 19 item 4) through the real
 * SDK client over HTTP: mixed addressing on `dagu_read` carries `field` and
 * `details`; an all-whitespace `target` fails on `target`; every
 * `dagu_change` error echoes `mode`, `type` and, for a valid name,
 * `dagName`/`dagUri`; the reference topics open with the H1 titles §10 lists.
 */
import { useStackAndClient } from './stack';
import { textOf, toolResult } from './tool-result';

const SPEC = 'steps:\n  - name: hello\n    run: echo hello\n';

const e2e = useStackAndClient();

async function errorOf(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = toolResult(await e2e.client.callTool({ name, arguments: args }));
  expect(result.isError).toBe(true);
  const sc = result.structuredContent as Record<string, unknown>;
  expect(result.content[0]).toMatchObject({ type: 'text', text: sc.message });
  return sc;
}

describe('dagu_read input (dagu-model §10)', () => {
  test('target next to uri: field target, details naming every conflicting field', async () => {
    const sc = await errorOf('dagu_read', { uri: 'dagu://reference/authoring', target: 'reference' });
    expect(sc).toMatchObject({
      code: 'invalid_tool_input',
      field: 'target',
      details: { fields: ['target', 'uri'] },
    });
  });

  test('several target-mode fields next to uri: field and details both present', async () => {
    const sc = await errorOf('dagu_read', { uri: 'dagu://dags', name: 'x', query: 'page=1' });
    expect(sc).toMatchObject({
      code: 'invalid_tool_input',
      field: 'name',
      details: { fields: ['name', 'query', 'uri'] },
    });
  });

  test.each([[''], ['   '], [' \t ']])('target %j is invalid_tool_input on target', async (target) => {
    const sc = await errorOf('dagu_read', { target });
    expect(sc).toMatchObject({ code: 'invalid_tool_input', field: 'target' });
  });
});

describe('dagu_change error echoes (dagu-model §10)', () => {
  const named = { dagName: 'echoed', dagUri: 'dagu://dags/echoed/spec' };

  test('unsupported_change_mode echoes mode, type, dagName and dagUri', async () => {
    const sc = await errorOf('dagu_change', { mode: 'write', name: 'echoed', spec: SPEC });
    expect(sc).toMatchObject({
      code: 'unsupported_change_mode',
      field: 'mode',
      mode: 'write',
      type: 'upsert_dag',
      ...named,
    });
  });

  test('unsupported_change_type echoes mode, type, dagName and dagUri', async () => {
    const sc = await errorOf('dagu_change', { mode: 'apply', type: 'drop_dag', name: ' echoed ', spec: SPEC });
    expect(sc).toMatchObject({
      code: 'unsupported_change_type',
      field: 'type',
      mode: 'apply',
      type: 'drop_dag',
      ...named,
    });
  });

  test('the mode error still wins over a bad type; an unknown field over both', async () => {
    const both = await errorOf('dagu_change', { mode: 'write', type: 'drop_dag', name: 'echoed', spec: SPEC });
    expect(both).toMatchObject({ code: 'unsupported_change_mode', mode: 'write', type: 'drop_dag', ...named });
    const unknown = await errorOf('dagu_change', { mode: 'write', name: 'echoed', spec: SPEC, force: true });
    expect(unknown).toMatchObject({ code: 'invalid_tool_input', field: 'force', mode: 'write', ...named });
  });

  test('a missing spec echoes the name; an invalid name is not echoed', async () => {
    const spec = await errorOf('dagu_change', { name: 'echoed' });
    expect(spec).toMatchObject({
      code: 'invalid_tool_input',
      field: 'spec',
      mode: 'preview',
      type: 'upsert_dag',
      ...named,
    });
    const bad = await errorOf('dagu_change', { mode: 'write', name: 'bad name', spec: SPEC });
    expect(bad).toMatchObject({ code: 'unsupported_change_mode', mode: 'write' });
    expect(bad).not.toHaveProperty('dagName');
    expect(bad).not.toHaveProperty('dagUri');
  });
});

describe('reference topics (dagu-model §10)', () => {
  test.each([
    ['authoring', '# Dagu DAG authoring'],
    ['tools', '# Dagu MCP tools'],
    ['notifications', '# Dagu MCP notifications'],
    ['read-tool', '# Dagu MCP read tool'],
    ['change-tool', '# Dagu MCP change tool'],
    ['execute-tool', '# Dagu MCP execute tool'],
    ['apps', '# Dagu MCP apps'],
  ])('%s opens with %s', async (topic, title) => {
    const read = await e2e.client.readResource({ uri: `dagu://reference/${topic}` });
    expect(textOf(read.contents[0]).split('\n')[0]).toBe(title);
  });
});
