/**
 * Wiki end to end (issue: "wiki-service: Wiki pages per workspace, the wiki
 * reads and resources, and page writes over REST"): the built stack as local
 * processes, pages written over REST, read back through `dagu_read` (target
 * and URI mode) and `resources/read` by the MCP SDK client. Each test names
 * the spec rule it proves.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, startStack, type Stack } from './stack';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { toolResult } from './tool-result';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const REFERENCES = ['dagu://reference/authoring', 'dagu://reference/tools', 'dagu://reference/notifications'];
const DEPLOY =
  '---\ntitle: Deploy runbook\ntags: [ops, deploy]\n---\n# Deploy\nRun the deploy job.\nThen verify the DEPLOY.\nRoll back a failed deploy.\n';
let stack: Stack;
let developer: string;
let viewer: string;
let client: Client;

const rest = (path: string, init: RestInit = {}): Promise<RestReply> => restCall(stack.baseUrl, path, init);

async function apiKey(adminToken: string, role: string): Promise<string> {
  const created = await rest('/api-keys', {
    method: 'POST',
    token: adminToken,
    body: { name: `wiki-${role}`, role, surfaces: ['mcp', 'rest_api'] },
  });
  return String(created.body?.key);
}

async function read(args: Record<string, unknown>) {
  const result = await client.callTool({ name: 'dagu_read', arguments: args });
  return { result, sc: result.structuredContent as Record<string, unknown> & { data: Record<string, unknown> } };
}

async function readResourceError(uri: string): Promise<McpError> {
  try {
    await client.readResource({ uri });
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error(`reading ${uri} did not fail`);
}

/** Page ids of a tree, depth first, as `workspace:id`. */
function leaves(nodes: unknown): string[] {
  if (!Array.isArray(nodes)) return [];
  return nodes.flatMap((node: { type: string; id: string; workspace: string; children?: unknown }) =>
    node.type === 'file' ? [`${node.workspace}:${node.id}`] : leaves(node.children),
  );
}

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  const admin = String((await rest('/auth/login', { method: 'POST', body: ADMIN })).body?.token);
  developer = await apiKey(admin, 'developer');
  viewer = await apiKey(admin, 'viewer');
  client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${viewer}` });
}, 90_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

describe('REST page writes (dagu-model §7 frontmatter, §9 developer and up)', () => {
  test('PUT creates (201, ETag, Location) then updates (200); title and tags come from the frontmatter', async () => {
    const created = await rest('/wiki/team/pages/runbooks/deploy', {
      method: 'PUT',
      token: developer,
      body: { content: DEPLOY },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    expect(created.headers.get('location')).toBe('/api/v1/wiki/team/pages/runbooks/deploy');
    expect(created.body).toMatchObject({
      created: true,
      workspace: 'team',
      path: 'runbooks/deploy',
      content: DEPLOY,
      id: 'runbooks/deploy',
      title: 'Deploy runbook',
      tags: ['ops', 'deploy'],
      updatedAt: expect.any(String),
      updatedBy: 'api_key:wiki-developer',
    });
    for (const [path, content] of [
      ['runbooks/db_restore', '# Restore\nRestore the database.\n'],
      ['readme', 'Welcome. See the deploy runbook.\n'],
    ] as const) {
      expect(
        (await rest(`/wiki/team/pages/${path}`, { method: 'PUT', token: developer, body: { content } })).status,
      ).toBe(201);
    }
    const markdown = await fetch(`${stack.baseUrl}/api/v1/wiki/ops/pages/oncall`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${developer}`, 'content-type': 'text/markdown' },
      body: 'Page the on-call engineer when a deploy fails.\n',
    });
    expect(markdown.status).toBe(201);
    const updated = await rest('/wiki/team/pages/readme', {
      method: 'PUT',
      token: developer,
      body: { content: 'Welcome!\nSee the deploy runbook.\n' },
      headers: { 'if-match': '"1"' },
    });
    expect(updated.status).toBe(200);
    expect(updated.headers.get('etag')).toBe('"2"');
  });

  test('GET reads the page back as JSON or Markdown', async () => {
    const page = await rest('/wiki/team/pages/runbooks%2Fdeploy', { token: viewer });
    expect(page.body).toMatchObject({
      id: 'runbooks/deploy',
      content: DEPLOY,
      mimeType: 'text/markdown',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
    });
    const raw = await fetch(`${stack.baseUrl}/api/v1/wiki/team/pages/runbooks/deploy`, {
      headers: { authorization: `Bearer ${viewer}`, accept: 'text/markdown' },
    });
    expect(await raw.text()).toBe(DEPLOY);
  });

  test('roles, conflicts and bad input (dagu-model §10: REST role failure → 403)', async () => {
    expect((await rest('/wiki/team/pages/x', { method: 'PUT', token: viewer, body: { content: 'x' } })).status).toBe(
      403,
    );
    expect(
      (
        await rest('/wiki/team/pages/readme', {
          method: 'PUT',
          token: developer,
          body: { content: 'x' },
          headers: { 'if-none-match': '*' },
        })
      ).body,
    ).toMatchObject({ code: 'conflict' });
    expect(
      (await rest('/wiki/all/pages/x', { method: 'PUT', token: developer, body: { content: 'x' } })).body,
    ).toMatchObject({ code: 'invalid_request', field: 'workspace' });
    expect(
      (await rest('/wiki/team/pages/a%20b', { method: 'PUT', token: developer, body: { content: 'x' } })).body,
    ).toMatchObject({ code: 'invalid_request', field: 'path' });
    expect(
      (
        await rest('/wiki/team/pages/bad', {
          method: 'PUT',
          token: developer,
          body: { content: '---\ntitle: [x\n---\n' },
        })
      ).body,
    ).toMatchObject({ code: 'invalid_request', field: 'content' });
    expect(
      (await rest('/wiki/team/pages/notes.md', { method: 'PUT', token: developer, body: { content: 'x' } })).body,
    ).toMatchObject({ code: 'invalid_request', field: 'path' });
    // Oversize bodies (default WIKI_PAGE_MAX_BYTES = 1 MiB) are 413 and write nothing.
    const big = await rest('/wiki/team/pages/big', {
      method: 'PUT',
      token: developer,
      body: { content: 'x'.repeat(1_048_577) },
    });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'invalid_request', field: 'content' });
    expect((await rest('/wiki/team/pages/big', { token: developer })).status).toBe(404);
  });
});

describe('dagu_read wiki targets (021 §Target contracts, Wiki models, §Output echoes)', () => {
  test('wiki (tree mode): data.tree with folders and page URIs, pagination, uri and link of the workspace', async () => {
    const { result, sc } = await read({ target: 'wiki', workspace: 'team' });
    expect(result.isError).toBeFalsy();
    expect(sc).toMatchObject({
      target: 'wiki',
      uri: 'dagu://wiki/team',
      workspace: 'team',
      data: { pagination: { page: 1, total: 3 } },
    });
    expect([...(sc.references as string[])].sort()).toEqual([...REFERENCES].sort());
    expect(leaves(sc.data.tree)).toEqual(['team:runbooks/db_restore', 'team:runbooks/deploy', 'team:readme']);
    expect(sc.data.tree).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'directory', id: 'runbooks' })]),
    );
    expect(result.content).toEqual([
      { type: 'text', text: 'Dagu read completed.' },
      { type: 'resource_link', uri: 'dagu://wiki/team', name: 'wiki', mimeType: 'application/json' },
    ]);
  });

  test('wiki (flat mode, target and URI mode): pages only in data.items with canonical URIs', async () => {
    const byTarget = await read({ target: 'wiki', query: 'flat=true&sort=name', prefix: 'runbooks/' });
    expect(byTarget.sc).toMatchObject({ uri: 'dagu://wiki?flat=true&sort=name', prefix: 'runbooks/' });
    expect((byTarget.sc.data.items as Array<{ uri: string }>).map((i) => i.uri)).toEqual([
      'dagu://wiki/team/runbooks%2Fdb_restore',
      'dagu://wiki/team/runbooks%2Fdeploy',
    ]);
    const byUri = await read({ uri: 'dagu://wiki?flat=true&perPage=1&page=2' });
    expect(byUri.sc).toMatchObject({
      target: 'wiki',
      uri: 'dagu://wiki?flat=true&perPage=1&page=2',
      data: { pagination: { page: 2, perPage: 1, total: 4, totalPages: 4 } },
    });
    expect(byUri.sc.data.items).toHaveLength(1);
    expect(byUri.sc.data.tree).toBeUndefined();
    const all = await read({ target: 'docs' });
    expect(all.sc.target).toBe('wiki');
    expect(leaves(all.sc.data.tree)).toEqual([
      'ops:oncall',
      'team:runbooks/db_restore',
      'team:runbooks/deploy',
      'team:readme',
    ]);
  });

  test('wiki_page in target and URI mode: the whole path is one percent-encoded segment (dagu-model §2)', async () => {
    const byTarget = await read({ target: 'wiki_page', workspace: 'team', path: 'runbooks/deploy' });
    expect(byTarget.sc).toMatchObject({
      target: 'wiki_page',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      workspace: 'team',
      path: 'runbooks/deploy',
      data: {
        id: 'runbooks/deploy',
        content: DEPLOY,
        mimeType: 'text/markdown',
        uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      },
    });
    expect(toolResult(byTarget.result).content[1]).toEqual({
      type: 'resource_link',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      name: 'wiki_page',
      mimeType: 'text/markdown',
    });
    const byUri = await read({ uri: 'dagu://wiki/team/runbooks%2Fdeploy' });
    expect(byUri.sc).toMatchObject({
      target: 'wiki_page',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      workspace: 'team',
      path: 'runbooks/deploy',
    });
    expect(byUri.sc.data.content).toBe(DEPLOY);
    expect((await read({ target: 'doc', workspace: 'team', path: 'readme' })).sc).toMatchObject({
      target: 'wiki_page',
      data: { version: 2 },
    });
  });

  test('wiki_search: line snippets per page, case-insensitive over titles and bodies, cursor paging, no uri', async () => {
    const { result, sc } = await read({ target: 'wiki_search', search: 'deploy', workspace: 'team' });
    expect(result.content).toEqual([{ type: 'text', text: 'Dagu read completed.' }]);
    expect(sc.uri).toBeUndefined();
    expect(sc).toMatchObject({ target: 'wiki_search', workspace: 'team', data: { hasMore: false } });
    const results = sc.data.results as Array<{
      id: string;
      uri: string;
      matches: Array<{ line: number; text: string }>;
      hasMoreMatches: boolean;
    }>;
    expect(results.map((r) => r.id)).toEqual(['readme', 'runbooks/deploy']);
    expect(results[1]).toMatchObject({ uri: 'dagu://wiki/team/runbooks%2Fdeploy', hasMoreMatches: true });
    expect(results[1]?.matches[0]).toEqual({ line: 2, text: 'title: Deploy runbook' });
    expect(results[1]?.matches).toHaveLength(5);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await read({
        target: 'wiki_search',
        search: 'DEPLOY',
        limit: 1,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      expect(page.sc.data.hasMore).toBe(page.sc.data.nextCursor !== undefined);
      seen.push(...(page.sc.data.results as Array<{ uri: string }>).map((r) => r.uri));
      cursor = page.sc.data.nextCursor as string | undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(['dagu://wiki/ops/oncall', 'dagu://wiki/team/readme', 'dagu://wiki/team/runbooks%2Fdeploy']);
  });
});

describe('resources/read of the wiki families (020: MIME types and content)', () => {
  test('the page is its Markdown as text/markdown; the collections are JSON', async () => {
    const page = await client.readResource({ uri: 'dagu://wiki/team/runbooks%2Fdeploy' });
    expect(page.contents).toEqual([
      { uri: 'dagu://wiki/team/runbooks%2Fdeploy', mimeType: 'text/markdown', text: DEPLOY },
    ]);
    for (const uri of ['dagu://wiki', 'dagu://wiki/team', 'dagu://wiki/team?flat=true']) {
      const collection = await client.readResource({ uri });
      const [content] = collection.contents;
      expect(content?.mimeType).toBe('application/json');
      const data = JSON.parse(content !== undefined && 'text' in content ? content.text : '{}') as {
        pagination?: unknown;
      };
      expect(data.pagination).toBeDefined();
    }
  });
});

describe('errors (021 §Errors, 020 §Errors, dagu-model §10)', () => {
  test.each([
    [{ target: 'wiki_page', workspace: 'all', path: 'readme' }, 'invalid_tool_input', 'workspace'],
    [{ target: 'wiki_page', workspace: 'team', path: 'a/../b' }, 'invalid_tool_input', 'path'],
    [{ target: 'wiki_page', workspace: 'team' }, 'invalid_tool_input', 'path'],
    [{ target: 'wiki', query: 'perPage=201' }, 'invalid_tool_input', 'query'],
    [{ target: 'wiki_search', search: 'x', cursor: 'bogus' }, 'invalid_tool_input', 'cursor'],
    [{ target: 'wiki_page', workspace: 'team', path: 'runbooks/nope' }, 'resource_not_found', 'path'],
    [{ target: 'wiki', workspace: 'nobody' }, 'resource_not_found', 'workspace'],
    [{ uri: 'dagu://wiki/team/runbooks/deploy' }, 'invalid_resource_uri', 'uri'],
    [{ uri: 'dagu://wiki/all/readme' }, 'invalid_resource_uri', 'uri'],
  ])('%j → %s', async (args, code, field) => {
    const { result, sc } = await read(args);
    expect(result.isError).toBe(true);
    expect(sc).toMatchObject({ code, field });
  });

  test('an unknown page on resources/read is JSON-RPC -32002 with the 020 error object', async () => {
    const missing = await readResourceError('dagu://wiki/team/runbooks%2Fnope');
    expect(missing.code).toBe(-32002);
    expect(missing.data).toMatchObject({
      code: 'resource_not_found',
      resourceUri: 'dagu://wiki/team/runbooks%2Fnope',
      operation: 'resources/read',
    });
  });

  test('DELETE (developer) removes a page: 204, then it is not found everywhere', async () => {
    expect((await rest('/wiki/team/pages/runbooks/db_restore', { method: 'DELETE', token: viewer })).status).toBe(403);
    expect((await rest('/wiki/team/pages/runbooks/db_restore', { method: 'DELETE', token: developer })).status).toBe(
      204,
    );
    expect((await rest('/wiki/team/pages/runbooks/db_restore', { token: viewer })).status).toBe(404);
    expect((await read({ uri: 'dagu://wiki/team/runbooks%2Fdb_restore' })).sc).toMatchObject({
      code: 'resource_not_found',
    });
  });
});

describe('non-ASCII titles (dagu-model §7)', () => {
  test('a frontmatter title outside ASCII is kept, read back by page and found by a case-insensitive search', async () => {
    const content = '---\ntitle: Übersicht – 日本語\ntags: [intl]\n---\nDiese Seite erklärt die Übersicht.\n';
    expect(
      (await rest('/wiki/intl/pages/guides/uebersicht', { method: 'PUT', token: developer, body: { content } })).status,
    ).toBe(201);
    const page = await read({ uri: 'dagu://wiki/intl/guides%2Fuebersicht' });
    expect(page.sc).toMatchObject({
      target: 'wiki_page',
      data: { id: 'guides/uebersicht', title: 'Übersicht – 日本語', content },
    });
    const found = await read({ target: 'wiki_search', search: 'ÜBERSICHT', workspace: 'intl' });
    const results = (found.sc.data as { results: Array<{ id: string; matches: Array<{ text: string }> }> }).results;
    expect(results.map((r) => r.id)).toEqual(['guides/uebersicht']);
    expect(results[0]?.matches.map((m) => m.text)).toContain('Diese Seite erklärt die Übersicht.');
  });
});
