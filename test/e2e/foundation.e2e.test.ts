/**
 * Foundation end to end: the built stack as local processes, driven by the
 * MCP SDK client over Streamable HTTP and by plain HTTP. Each test names the
 * spec rule it proves.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { useStackAndClient } from './stack';
import { toolResult } from './tool-result';

const TOPICS = ['authoring', 'tools', 'apps', 'read-tool', 'change-tool', 'execute-tool', 'notifications'];
const REFERENCES = ['dagu://reference/authoring', 'dagu://reference/tools', 'dagu://reference/notifications'];

const e2e = useStackAndClient();

async function readError(uri: string): Promise<McpError> {
  try {
    await e2e.client.readResource({ uri });
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error(`reading ${uri} did not fail`);
}

describe('MCP endpoint (spec 020, dagu-model §8)', () => {
  test('tools/list advertises the three tools with titles, annotations and input schemas, no output schema', async () => {
    const { tools } = await e2e.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['dagu_change', 'dagu_execute', 'dagu_read']);
    const read = tools.find((t) => t.name === 'dagu_read');
    expect(read?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(tools.find((t) => t.name === 'dagu_change')?.annotations).toMatchObject({
      destructiveHint: true,
      openWorldHint: false,
    });
    expect(tools.find((t) => t.name === 'dagu_execute')?.title).toBe('Execute, enqueue, retry, or stop DAG-runs');
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema).toBeUndefined();
    }
    expect(e2e.client.getInstructions()).toContain('dagu_change');
  });

  test.each(TOPICS)('reference topic %s reads by tool (target and URI mode) and by resource', async (topic) => {
    const byTarget = await e2e.client.callTool({ name: 'dagu_read', arguments: { target: 'reference', name: topic } });
    expect(byTarget.isError).toBeFalsy();
    const structured = byTarget.structuredContent as {
      target: string;
      uri: string;
      data: { mimeType: string; text: string };
      references: string[];
    };
    expect(structured.target).toBe('reference');
    expect(structured.uri).toBe(`dagu://reference/${topic}`);
    expect(structured.data.mimeType).toBe('text/markdown');
    expect(structured.data.text.length).toBeGreaterThan(200);
    expect([...structured.references].sort()).toEqual([...REFERENCES].sort());
    expect(byTarget.content).toEqual([
      { type: 'text', text: 'Dagu read completed.' },
      { type: 'resource_link', uri: `dagu://reference/${topic}`, name: 'dagu_reference', mimeType: 'text/markdown' },
    ]);

    const byUri = await e2e.client.callTool({ name: 'dagu_read', arguments: { uri: `dagu://reference/${topic}` } });
    expect((byUri.structuredContent as { data: { text: string } }).data.text).toBe(structured.data.text);

    const resource = await e2e.client.readResource({ uri: `dagu://reference/${topic}` });
    expect(resource.contents).toEqual([
      { uri: `dagu://reference/${topic}`, mimeType: 'text/markdown', text: structured.data.text },
    ]);
  });

  test('target=reference defaults to authoring; references lists every topic (021)', async () => {
    const def = await e2e.client.callTool({ name: 'dagu_read', arguments: { target: ' reference ' } });
    expect((def.structuredContent as { uri: string }).uri).toBe('dagu://reference/authoring');
    const all = await e2e.client.callTool({ name: 'dagu_read', arguments: { target: 'references' } });
    const sc = all.structuredContent as {
      uri?: string;
      data: { items: Array<{ name: string; uri: string; mimeType: string }> };
    };
    expect(sc.uri).toBeUndefined();
    expect(all.content).toHaveLength(1);
    expect(sc.data.items.map((i) => i.name)).toEqual(TOPICS);
    const viaUri = await e2e.client.callTool({ name: 'dagu_read', arguments: { uri: 'dagu://reference' } });
    expect(viaUri.structuredContent).toMatchObject({ target: 'references', uri: 'dagu://reference' });
    expect(toolResult(viaUri).content[1]).toMatchObject({
      type: 'resource_link',
      name: 'dagu_references',
      mimeType: 'application/json',
    });
  });

  test('resources/list and resources/templates/list carry the dagu:// families with MIME types (020)', async () => {
    const { resources } = await e2e.client.listResources();
    const byUri = new Map(resources.map((r) => [r.uri, r.mimeType]));
    expect(byUri.get('dagu://reference')).toBe('application/json');
    expect(byUri.get('dagu://dags')).toBe('application/json');
    expect(byUri.get('dagu://runs')).toBe('application/json');
    expect(byUri.get('dagu://wiki')).toBe('application/json');
    for (const t of TOPICS) expect(byUri.get(`dagu://reference/${t}`)).toBe('text/markdown');
    const { resourceTemplates } = await e2e.client.listResourceTemplates();
    const templates = new Map(resourceTemplates.map((t) => [t.uriTemplate, t.mimeType]));
    expect(templates.get('dagu://dags/{name}/spec')).toBe('application/yaml');
    expect(templates.get('dagu://wiki/{workspace}/{path}')).toBe('text/markdown');
    expect(templates.get('dagu://runs/{name}/{dagRunId}/steps/{stepName}/logs')).toBe('application/json');
    expect(resourceTemplates.length).toBe(15);
  });

  test('resources/read failures are JSON-RPC errors carrying the 020 error object (dagu-model §10)', async () => {
    const unknownHost = await readError('dagu://widgets/x');
    expect(unknownHost.code).toBe(-32602);
    expect(unknownHost.data).toMatchObject({
      code: 'unsupported_resource',
      resourceUri: 'dagu://widgets/x',
      operation: 'resources/read',
    });
    const malformed = await readError('dagu://dags/%zz/spec');
    expect(malformed.code).toBe(-32602);
    expect(malformed.data).toMatchObject({ code: 'invalid_resource_uri' });
    const wrongScheme = await readError('https://example.com/x');
    expect(wrongScheme.data).toMatchObject({ code: 'invalid_resource_uri' });
    const missing = await readError('dagu://reference/no-such-topic');
    expect(missing.code).toBe(-32002);
    expect(missing.data).toMatchObject({ code: 'resource_not_found' });
    expect(missing.message).toContain('no-such-topic');
  });
});

describe('dagu_read input rules (021 §Input, §Errors)', () => {
  const call = async (args: unknown) => {
    // Raw arguments of any JSON type: the gateway must answer with isError, not -32602 (dagu-model §10).
    const res = await e2e.client.request(
      { method: 'tools/call', params: { name: 'dagu_read', arguments: args as Record<string, unknown> } },
      (await import('@modelcontextprotocol/sdk/types.js')).CallToolResultSchema,
    );
    return res;
  };

  test.each([
    [[1, 2], 'invalid_tool_input', undefined],
    ['reference', 'invalid_tool_input', undefined],
    [{}, 'invalid_tool_input', undefined],
    [{ target: 'reference', bogus: 1 }, 'invalid_tool_input', 'bogus'],
    [{ target: 'reference', name: 5 }, 'invalid_tool_input', 'name'],
    [{ target: 'reference', uri: 'dagu://reference' }, 'invalid_tool_input', 'target'],
    [{ target: 'Reference' }, 'unsupported_read_target', 'target'],
    [{ target: 'workbook' }, 'invalid_tool_input', 'path'],
    [{ target: 'run_logs', name: 'nightly' }, 'invalid_tool_input', 'dagRunId'],
    [{ target: 'dags', name: 'x' }, 'invalid_tool_input', 'name'],
    [{ target: 'dags', query: '?page=1' }, 'invalid_tool_input', 'query'],
    [{ target: 'dags', query: 'page=0' }, 'invalid_tool_input', 'query'],
    [{ target: 'dag_search', search: 'x', limit: 51 }, 'invalid_tool_input', 'limit'],
    [{ target: 'wiki_page', workspace: 'all', path: 'a' }, 'invalid_tool_input', 'workspace'],
    [{ uri: 'dagu://dags?page=0' }, 'invalid_resource_uri', 'uri'],
    [{ uri: 'dagu://nope' }, 'unsupported_resource', 'uri'],
  ])('%j → %s (field %s)', async (args, code, field) => {
    const result = await call(args);
    expect(result.isError).toBe(true);
    const sc = result.structuredContent as Record<string, unknown>;
    expect(sc.code).toBe(code);
    if (field !== undefined) expect(sc.field).toBe(field);
    expect(result.content[0]).toMatchObject({ type: 'text', text: sc.message });
  });

  test('null is absent and strings are trimmed; the error carries target and uri (021)', async () => {
    const ok = await call({ target: 'reference', name: '  tools  ', uri: null });
    expect(ok.structuredContent).toMatchObject({ target: 'reference', uri: 'dagu://reference/tools' });
    const err = await call({ target: 'run_logs', name: 'nightly', dagRunId: 'r1', query: 'tail=0' });
    expect(err.structuredContent).toMatchObject({
      code: 'invalid_tool_input',
      target: 'run_logs',
      uri: 'dagu://runs/nightly/r1/logs?tail=0',
    });
  });
});

describe('bus round trip and HTTP edges', () => {
  test('GET /api/v1/health pings every service over Redis (docs/architecture.md "Request flow")', async () => {
    const res = await fetch(`${e2e.stack.baseUrl}/api/v1/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = (await res.json()) as { services: Record<string, { ok: boolean; replica: string }> };
    for (const service of ['dag-service', 'run-service', 'wiki-service']) {
      expect(body.services[service]).toMatchObject({ ok: true });
      expect(body.services[service]?.replica).toBeTruthy();
    }
  });

  test('malformed JSON on /mcp is a JSON-RPC -32700, never HTML', async () => {
    const res = await fetch(e2e.stack.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc": "2.0", ',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  test('an oversize body gets 413 as JSON', async () => {
    const res = await fetch(e2e.stack.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5 * 1024 * 1024) } }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: -32600 } });
  });

  test('a request without a session is 400, an unknown session 404 (Streamable HTTP)', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
    const none = await fetch(e2e.stack.mcpUrl, { method: 'POST', headers, body });
    expect(none.status).toBe(400);
    const unknown = await fetch(e2e.stack.mcpUrl, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': 'nope' },
      body,
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ id: 7, error: { code: -32001 } });
  });

  test('REST errors are JSON with a code and request id', async () => {
    const res = await fetch(`${e2e.stack.baseUrl}/api/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'resource_not_found', requestId: expect.any(String) });
    const bad = await fetch(`${e2e.stack.baseUrl}/api/v1/health`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_request' });
  });
});
