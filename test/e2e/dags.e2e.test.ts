/**
 * DAGs end to end (specs 022, 021 `dags`/`dag`/`dag_spec`/`dag_search`, 020,
 * dagu-model §2–4, §10): every call crosses Redis to dag-service and PostgreSQL.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, startStack, type Stack } from './stack';
import { textOf } from './tool-result';

const REFERENCES = ['dagu://reference/authoring', 'dagu://reference/tools', 'dagu://reference/notifications'];
const HELLO = 'steps:\n  - name: hello\n    run: echo hello\n';
let stack: Stack;
let client: Client;

type Result = {
  isError?: boolean;
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
};
const change = async (args: Record<string, unknown>): Promise<Result> =>
  (await client.callTool({ name: 'dagu_change', arguments: args })) as Result;
const read = async (args: Record<string, unknown>): Promise<Result> =>
  (await client.callTool({ name: 'dagu_read', arguments: args })) as Result;
const sc = (r: Result): Record<string, unknown> => r.structuredContent ?? {};
const data = (r: Result): Record<string, unknown> => (sc(r).data ?? {}) as Record<string, unknown>;

beforeAll(async () => {
  stack = await startStack();
  client = await connectClient(stack.mcpUrl);
  const fleet = [
    ['alpha', 'labels: [team=data, workspace=ops]\nschedule: "0 3 * * *"\n'],
    ['beta', 'labels: [team=web]\n'],
    ['gamma.v2', 'labels: [team=data]\nschedule: "*/5 * * * *"\n'],
    ['nightly-report', 'description: Builds the nightly report\n'],
  ];
  for (const [name, head] of fleet) {
    const r = await change({
      name,
      spec: `${head}steps:\n  - name: build\n    run: echo building ${name}\n`,
      mode: 'apply',
    });
    expect(sc(r)).toMatchObject({ applied: true });
  }
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

describe('dagu_change (022)', () => {
  test('preview is the default, validates and writes nothing', async () => {
    const r = await change({ name: 'preview-only', spec: HELLO });
    expect(r.content).toEqual([
      { type: 'text', text: 'DAG spec is valid. Re-run with mode=apply to write it.' },
      { type: 'resource_link', uri: 'dagu://dags/preview-only/spec', name: 'dag_spec', mimeType: 'application/yaml' },
    ]);
    expect(sc(r)).toMatchObject({
      mode: 'preview',
      type: 'upsert_dag',
      dagName: 'preview-only',
      valid: true,
      errors: [],
      applied: false,
      dagUri: 'dagu://dags/preview-only/spec',
    });
    expect(sc(r).created).toBeUndefined();
    expect(sc(r).dag).toMatchObject({ name: 'preview-only', steps: [{ name: 'hello' }] });
    expect([...(sc(r).references as string[])].sort()).toEqual([...REFERENCES].sort());
    const after = await read({ target: 'dag_spec', name: 'preview-only' });
    expect(sc(after)).toMatchObject({ code: 'resource_not_found' });
  });

  test.each([
    ['invalid YAML', 'steps:\n  - name: [\n', 'invalid YAML'],
    ['unknown root key', 'bogus: 1\nsteps:\n  - name: a\n    run: echo\n', "field 'bogus'"],
    ['step with nothing to run', 'steps:\n  - name: a\n', 'step command is required'],
    ['duplicate step names', 'steps:\n  - name: a\n    run: echo\n  - name: a\n    run: echo\n', 'duplicate step name'],
    [
      'missing dependency',
      'steps:\n  - name: a\n    depends: [b]\n    run: echo\n',
      'step a depends on non-existent step b',
    ],
    [
      'cycle',
      'steps:\n  - name: a\n    depends: [b]\n    run: echo\n  - name: b\n    depends: [a]\n    run: echo\n',
      'cycle',
    ],
    ['bad cron', 'schedule: "61 * * * *"\nsteps:\n  - name: a\n    run: echo\n', "field 'schedule'"],
    ['reserved step id', 'steps:\n  - name: a\n    id: env\n    run: echo\n', 'reserved'],
    [
      'depends in a chain DAG',
      'type: chain\nsteps:\n  - name: a\n    run: echo\n  - name: b\n    depends: [a]\n    run: echo\n',
      'chain',
    ],
    ['unsupported executor', 'steps:\n  - name: a\n    executor: ssh\n    command: echo\n', 'not supported here'],
  ])(
    'invalid DAG (%s) is valid=false, not a tool error (022 §Change Type, dagu-model §4)',
    async (_label, spec, needle) => {
      const r = await change({ name: 'broken', spec });
      expect(r.isError).toBeFalsy();
      expect(r.content[0]).toEqual({ type: 'text', text: 'DAG spec is not valid; no changes were applied.' });
      expect(sc(r)).toMatchObject({
        valid: false,
        applied: false,
        dagName: 'broken',
        dagUri: 'dagu://dags/broken/spec',
      });
      // Dagu case TestChangePreviewInvalidReturnsValidationResult: the link to dagUri is there, no DAG stored or not.
      expect(r.content[1]).toEqual({
        type: 'resource_link',
        uri: 'dagu://dags/broken/spec',
        name: 'dag_spec',
        mimeType: 'application/yaml',
      });
      expect((sc(r).errors as string[]).join('\n')).toContain(needle);
      expect(sc(r).dag).toBeUndefined();
    },
  );

  test('apply creates, then updates; an invalid apply leaves the stored DAG untouched (022 §Apply Mode)', async () => {
    const created = await change({ name: 'lifecycle', spec: HELLO, mode: 'apply' });
    expect(created.content[0]).toEqual({ type: 'text', text: 'DAG change applied.' });
    expect(sc(created)).toMatchObject({ applied: true, created: true, updated: false });
    const v2 = 'description: second\n' + HELLO;
    const updated = await change({ name: 'lifecycle', spec: v2, mode: ' apply ' });
    expect(sc(updated)).toMatchObject({ applied: true, created: false, updated: true });
    const bad = await change({ name: 'lifecycle', spec: 'steps: [', mode: 'apply' });
    expect(sc(bad)).toMatchObject({ valid: false, applied: false });
    const spec = await read({ target: 'dag_spec', name: 'lifecycle' });
    expect(data(spec)).toEqual({ name: 'lifecycle', mimeType: 'application/yaml', spec: v2, errors: [] });
  });

  test.each([
    [{ name: 'x', spec: HELLO, mode: 'write' }, 'unsupported_change_mode', 'mode'],
    [{ name: 'x', spec: HELLO, type: 'drop_dag' }, 'unsupported_change_type', 'type'],
    [{ spec: HELLO }, 'invalid_tool_input', 'name'],
    [{ name: 'x', spec: '   ' }, 'invalid_tool_input', 'spec'],
    [{ name: 'x', spec: HELLO, extra: true }, 'invalid_tool_input', 'extra'],
    [{ name: 'x', spec: 42 }, 'invalid_tool_input', 'spec'],
  ])('%j → isError %s on %s (022 §Errors)', async (args, code, field) => {
    const r = await change(args);
    expect(r.isError).toBe(true);
    expect(sc(r)).toMatchObject({ code, field });
  });
});

describe('dagu_read DAG targets (021)', () => {
  test('dags: page of summaries with canonical spec URIs; the text carries indented JSON', async () => {
    const r = await read({ target: 'dags', query: 'perPage=2&sort=name&order=asc' });
    const d = data(r);
    expect((d.items as Array<{ name: string }>).map((i) => i.name)).toEqual(['alpha', 'beta']);
    expect(d.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'alpha', uri: 'dagu://dags/alpha/spec', suspended: false }),
      ]),
    );
    expect(d.pagination).toMatchObject({ page: 1, perPage: 2 });
    expect(sc(r).uri).toBeUndefined();
    expect(r.content).toHaveLength(1);
    expect(r.content[0]?.text).toBe(`Dagu read completed.\n\n${JSON.stringify(d, null, 2)}`);
  });

  test('dags: a page the gateway holds is answered again unchanged, and a change shows on the very next read', async () => {
    const query = 'name=memo-&perPage=5';
    await change({ name: 'memo-a', spec: HELLO, mode: 'apply' });
    const first = await read({ target: 'dags', query });
    expect((data(first).items as Array<{ name: string }>).map((i) => i.name)).toEqual(['memo-a']);
    // Held by the gateway's page memo now (dag.listIfChanged answers "unchanged"): the same answer.
    const again = await read({ target: 'dags', query });
    expect(again).toEqual(first);
    const viaUri = await read({ uri: `dagu://dags?${query}` });
    expect(sc(viaUri)).toMatchObject({ target: 'dags', uri: `dagu://dags?${query}`, data: data(first) });
    expect(viaUri.content[1]).toMatchObject({ type: 'resource_link', uri: `dagu://dags?${query}` });
    await change({ name: 'memo-b', spec: `description: second\n${HELLO}`, mode: 'apply' });
    const changed = await read({ target: 'dags', query });
    expect((data(changed).items as Array<{ name: string }>).map((i) => i.name)).toEqual(['memo-a', 'memo-b']);
    expect(changed.content[0]?.text).toBe(`Dagu read completed.\n\n${JSON.stringify(data(changed), null, 2)}`);
    expect(sc(await change({ name: 'memo-a', type: 'delete_dag', mode: 'apply' }))).toMatchObject({ applied: true });
    const deleted = await read({ target: 'dags', query });
    expect((data(deleted).items as Array<{ name: string }>).map((i) => i.name)).toEqual(['memo-b']);
  });

  test('dags filters: name, labels, sort=nextRun, order=desc; URI mode returns the URI with its query', async () => {
    const byLabel = await read({ target: 'dags', query: 'labels=team%3Ddata' });
    expect((data(byLabel).items as Array<{ name: string }>).map((i) => i.name).sort()).toEqual(['alpha', 'gamma.v2']);
    const byName = await read({ uri: 'dagu://dags?name=nightly' });
    expect((data(byName).items as Array<{ name: string }>).map((i) => i.name)).toEqual(['nightly-report']);
    expect(sc(byName)).toMatchObject({ target: 'dags', uri: 'dagu://dags?name=nightly' });
    expect(byName.content[1]).toMatchObject({
      type: 'resource_link',
      uri: 'dagu://dags?name=nightly',
      name: 'dags',
      mimeType: 'application/json',
    });
    const next = await read({ target: 'dags', query: 'sort=nextRun' });
    expect((data(next).items as Array<{ name: string }>)[0]?.name).toBe('gamma.v2');
    const desc = await read({ target: 'dags', query: 'order=desc&perPage=1' });
    expect((data(desc).items as Array<{ name: string }>)[0]?.name).toBe('nightly-report');
  });

  test.each(['page=0', 'perPage=201', 'sort=size', 'order=up', 'labels=a,,b', 'bogus=1', 'name='])(
    'dags query %s is refused (021 §Query handling)',
    async (query) => {
      const byTarget = await read({ target: 'dags', query });
      expect(sc(byTarget)).toMatchObject({ code: 'invalid_tool_input', field: 'query' });
      const byUri = await read({ uri: `dagu://dags?${query}` });
      expect(sc(byUri)).toMatchObject({ code: 'invalid_resource_uri', field: 'uri' });
    },
  );

  test('dag: the detail model; dag_spec: YAML in both modes with its resource link', async () => {
    const dag = await read({ target: 'dag', name: 'alpha' });
    expect(data(dag)).toMatchObject({ name: 'alpha', specUri: 'dagu://dags/alpha/spec', suspended: false });
    expect(sc(dag).uri).toBeUndefined();
    const spec = await read({ target: 'dag_spec', name: 'gamma.v2' });
    expect(sc(spec)).toMatchObject({ target: 'dag_spec', uri: 'dagu://dags/gamma.v2/spec' });
    expect(data(spec).spec).toContain('echo building gamma.v2');
    expect(spec.content[1]).toEqual({
      type: 'resource_link',
      uri: 'dagu://dags/gamma.v2/spec',
      name: 'dag_spec',
      mimeType: 'application/yaml',
    });
    const viaUri = await read({ uri: 'dagu://dags/gamma%2Ev2/spec' });
    expect(data(viaUri).spec).toBe(data(spec).spec);
  });

  test('an unknown DAG is resource_not_found with details.didYouMean (021 §Errors, 036)', async () => {
    const r = await read({ target: 'dag', name: 'nightly-reprot' });
    expect(r.isError).toBe(true);
    expect(sc(r)).toMatchObject({
      code: 'resource_not_found',
      target: 'dag',
      details: { didYouMean: ['nightly-report'] },
    });
    const spec = await read({ target: 'dag_spec', name: 'alpah' });
    expect(sc(spec)).toMatchObject({ code: 'resource_not_found', uri: 'dagu://dags/alpah/spec' });
  });

  test('dag_search: line snippets, hasMoreMatches, paging with an opaque cursor, workspace filter', async () => {
    const first = await read({ target: 'dag_search', search: 'ECHO BUILDING', limit: 2 });
    const d = data(first);
    const results = d.results as Array<{
      name: string;
      uri: string;
      matches: Array<{ line: number; text: string }>;
      hasMoreMatches: boolean;
    }>;
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ uri: `dagu://dags/${results[0]?.name}/spec`, hasMoreMatches: false });
    expect(results[0]?.matches[0]?.text).toContain('echo building');
    expect(d.hasMore).toBe(true);
    const second = await read({
      target: 'dag_search',
      search: 'ECHO BUILDING',
      limit: 2,
      cursor: String(d.nextCursor),
    });
    const names = [...results, ...(data(second).results as typeof results)].map((x) => x.name);
    expect(new Set(names).size).toBe(names.length);
    const scoped = await read({ target: 'dag_search', search: 'echo', workspace: 'ops' });
    expect((data(scoped).results as typeof results).map((x) => x.name)).toEqual(['alpha']);
    const badCursor = await read({ target: 'dag_search', search: 'echo', cursor: 'nope' });
    expect(sc(badCursor)).toMatchObject({ code: 'invalid_tool_input', field: 'cursor' });
  });
});

describe('resources/read of DAG families (020)', () => {
  test('dagu://dags (with a query) is JSON and dagu://dags/{name}/spec is the YAML', async () => {
    const list = await client.readResource({ uri: 'dagu://dags?perPage=1' });
    expect(list.contents[0]?.mimeType).toBe('application/json');
    expect(JSON.parse(textOf(list.contents[0])).items).toHaveLength(1);
    const spec = await client.readResource({ uri: 'dagu://dags/beta/spec' });
    expect(spec.contents[0]).toMatchObject({ uri: 'dagu://dags/beta/spec', mimeType: 'application/yaml' });
    expect(textOf(spec.contents[0])).toContain('echo building beta');
  });

  test('an unknown DAG spec is a JSON-RPC -32002 with the 020 error object', async () => {
    const err = await client.readResource({ uri: 'dagu://dags/nope/spec' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32002);
    expect((err as McpError).data).toMatchObject({
      code: 'resource_not_found',
      resourceUri: 'dagu://dags/nope/spec',
      operation: 'resources/read',
    });
  });
});
