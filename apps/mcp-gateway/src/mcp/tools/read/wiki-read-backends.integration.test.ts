import { BusClient } from '@dagu-mcp/bus';
import { ANONYMOUS_PRINCIPAL, DaguError } from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import { FakeWikiService, REDIS_URL } from '../../../../test-fixtures/fake-wiki-service';
import { createGatewayHandlers } from '../../gateway-handlers';
import type { McpCallContext } from '../../mcp-types';
import { parseReadInput } from './read-input';
import { wikiListPayload, wikiSearchPayload } from './wiki-read-backends';

/**
 * The wiki read targets through the gateway's MCP handlers (`dagu_read` and
 * `resources/read`) to a fake wiki-service on the real bus: which op each
 * target calls with which payload, and the 021 §Output envelope around it.
 */
const wiki = new FakeWikiService();
const bus = new BusClient({ redisUrl: REDIS_URL, prefix: wiki.prefix, defaultTimeoutMs: 5000 });
const handlers = createGatewayHandlers({
  bus,
  topics: new Map(),
  logger: createLogger({ name: 'test', level: 'silent' }),
  audit: () => undefined,
});
const ctx: McpCallContext = {
  principal: ANONYMOUS_PRINCIPAL,
  signal: new AbortController().signal,
  sessionId: undefined,
  progressToken: undefined,
  notify: async () => undefined,
};
const read = async (args: Record<string, unknown>) => {
  const tool = handlers.tools.dagu_read;
  if (tool === undefined) throw new Error('dagu_read is not registered');
  return tool(args, ctx);
};

beforeAll(async () => {
  await Promise.all([wiki.start(), bus.start()]);
  wiki.pages.set('team/runbooks/deploy', { content: '# Deploy\n', version: 1, updatedBy: 'dana' });
});

afterAll(async () => {
  await bus.close();
  await wiki.close();
});

describe('payloads (021 §Input → wiki.* ops)', () => {
  test('wiki: query, workspace and the prefix field; the field and the query prefix must agree', () => {
    expect(
      wikiListPayload(
        parseReadInput({ target: 'wiki', workspace: 'team', query: 'flat=true&perPage=5', prefix: 'a/' }, {}),
      ),
    ).toEqual({
      workspace: 'team',
      flat: true,
      perPage: 5,
      prefix: 'a/',
    });
    expect(wikiListPayload(parseReadInput({ uri: 'dagu://wiki?sort=mtime' }, {}))).toEqual({ sort: 'mtime' });
    expect(wikiListPayload(parseReadInput({ target: 'wiki', query: 'prefix=a', prefix: 'a' }, {}))).toEqual({
      prefix: 'a',
    });
    expect(() => wikiListPayload(parseReadInput({ target: 'wiki', query: 'prefix=a', prefix: 'b' }, {}))).toThrow(
      DaguError,
    );
  });

  test('wiki_search: every optional field travels only when given', () => {
    expect(wikiSearchPayload(parseReadInput({ target: 'wiki_search', search: 'x' }, {}))).toEqual({ search: 'x' });
    expect(
      wikiSearchPayload(
        parseReadInput({ target: 'doc_search', search: 'x', workspace: 'all', prefix: 'p', cursor: 'c', limit: 3 }, {}),
      ),
    ).toEqual({
      search: 'x',
      workspace: 'all',
      prefix: 'p',
      cursor: 'c',
      limit: 3,
    });
  });
});

describe('dagu_read and resources/read on the wiki families (021 §Output, 020 MIME types)', () => {
  test('wiki_page in target mode: uri with the encoded path, resource link text/markdown, echoes', async () => {
    const result = await read({ target: 'wiki_page', workspace: 'team', path: 'runbooks/deploy' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      target: 'wiki_page',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      workspace: 'team',
      path: 'runbooks/deploy',
      data: { id: 'runbooks/deploy', content: '# Deploy\n', mimeType: 'text/markdown' },
    });
    expect(result.content[1]).toEqual({
      type: 'resource_link',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      name: 'wiki_page',
      mimeType: 'text/markdown',
    });
    expect(wiki.last('wiki.get')?.payload).toEqual({ workspace: 'team', path: 'runbooks/deploy' });
  });

  test('wiki in URI mode passes the workspace and query; wiki_search has no uri', async () => {
    const collection = await read({ uri: 'dagu://wiki/team?flat=true' });
    expect(collection.structuredContent).toMatchObject({
      target: 'wiki',
      uri: 'dagu://wiki/team?flat=true',
      workspace: 'team',
    });
    expect(wiki.last('wiki.list')?.payload).toEqual({ workspace: 'team', flat: true });
    const search = await read({ target: 'wiki_search', search: 'deploy', prefix: 'runbooks/' });
    expect(search.structuredContent).toMatchObject({
      target: 'wiki_search',
      prefix: 'runbooks/',
      data: { results: [], hasMore: false },
    });
    expect(search.content).toHaveLength(1);
  });

  test('resources/read: the page is its Markdown as text/markdown, the collection JSON', async () => {
    const page = await handlers.readResource('dagu://wiki/team/runbooks%2Fdeploy', ctx);
    expect(page.contents).toEqual([
      { uri: 'dagu://wiki/team/runbooks%2Fdeploy', mimeType: 'text/markdown', text: '# Deploy\n' },
    ]);
    const collection = await handlers.readResource('dagu://wiki', ctx);
    const [body] = collection.contents;
    expect(body?.mimeType).toBe('application/json');
    expect(JSON.parse(body !== undefined && 'text' in body ? body.text : '')).toMatchObject({
      items: [{ id: 'runbooks/deploy' }],
    });
  });

  test('an unknown page is resource_not_found with target and uri', async () => {
    const result = await read({ target: 'wiki_page', workspace: 'team', path: 'nope' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      code: 'resource_not_found',
      target: 'wiki_page',
      uri: 'dagu://wiki/team/nope',
    });
  });
});
