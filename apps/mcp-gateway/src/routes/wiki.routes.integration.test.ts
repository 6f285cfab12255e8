import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { BusClient } from '@dagu-mcp/bus';
import { RoleSchema, WIKI_PAGE_MAX_BYTES } from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import { FakeWikiService, REDIS_URL } from '../../test-fixtures/fake-wiki-service';
import { buildOpenApiDocument } from '../http/openapi';
import { requestId } from '../http/request-id';
import { createRestRouter } from '../http/rest-router';
import { wikiRoutes } from './wiki.routes';

/**
 * The wiki REST routes against a fake wiki-service on the real bus: the
 * request → op mapping, conditional writes, roles (dagu-model §9: wiki
 * writes are developer and up; §10: REST role failures are HTTP 403) and
 * JSON errors.
 */
const wiki = new FakeWikiService();
const bus = new BusClient({ redisUrl: REDIS_URL, prefix: wiki.prefix, defaultTimeoutMs: 5000 });
let server: Server;
let base = '';

/** Test authentication: the caller's role comes from `X-Test-Role` (default developer). */
function testAuth(req: Request, res: Response, next: NextFunction): void {
  const role = RoleSchema.parse(req.header('x-test-role') ?? 'developer');
  res.locals.principal = { id: `u-${role}`, subject: `${role}-user`, role, credentialType: 'api_key' };
  next();
}

beforeAll(async () => {
  await Promise.all([wiki.start(), bus.start()]);
  const app = express();
  app.use(requestId());
  const logger = createLogger({ name: 'test', level: 'silent' });
  app.use(
    '/api/v1',
    createRestRouter({
      logger,
      parseJson: express.json({ limit: 4 * 1024 * 1024 }),
      authenticate: testAuth,
      routes: [wikiRoutes({ bus })],
      openApi: (routes) => buildOpenApiDocument(routes, { version: 'test', basePath: '' }),
    }),
  );
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/api/v1`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await bus.close();
  await wiki.close();
});

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

describe('PUT /api/v1/wiki/{workspace}/pages/{path}', () => {
  test('creates (201, Location, ETag) then updates (200); the writer is the caller', async () => {
    const created = await fetch(`${base}/wiki/team/pages/runbooks/deploy`, {
      method: 'PUT',
      ...json({ content: '# Deploy\n' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/api/v1/wiki/team/pages/runbooks/deploy');
    expect(created.headers.get('etag')).toBe('"1"');
    expect(await created.json()).toMatchObject({
      created: true,
      changed: true,
      content: '# Deploy\n',
      id: 'runbooks/deploy',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
    });
    expect(wiki.last('wiki.put')).toMatchObject({
      payload: { workspace: 'team', path: 'runbooks/deploy', content: '# Deploy\n' },
      principal: { subject: 'developer-user' },
    });

    const encoded = await fetch(`${base}/wiki/team/pages/runbooks%2Fdeploy`, {
      method: 'PUT',
      ...json({ content: '# Deploy v2\n' }),
    });
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get('etag')).toBe('"2"');
    expect(wiki.last('wiki.put')?.payload).toMatchObject({ path: 'runbooks/deploy' });
  });

  test('a text/markdown body is the page as is', async () => {
    const res = await fetch(`${base}/wiki/team/pages/notes`, {
      method: 'PUT',
      headers: { 'content-type': 'text/markdown' },
      body: '---\ntitle: N\n---\nbody\n',
    });
    expect(res.status).toBe(201);
    expect(wiki.last('wiki.put')?.payload).toMatchObject({ content: '---\ntitle: N\n---\nbody\n' });
  });

  test('If-Match and If-None-Match: * make writes conditional (409 conflict when not met)', async () => {
    const ok = await fetch(`${base}/wiki/team/pages/notes`, {
      method: 'PUT',
      ...json({ content: 'v2' }, { 'if-match': '"1"' }),
    });
    expect(ok.status).toBe(200);
    expect(wiki.last('wiki.put')?.payload).toMatchObject({ expectedVersion: 1 });
    const stale = await fetch(`${base}/wiki/team/pages/notes`, {
      method: 'PUT',
      ...json({ content: 'v3' }, { 'if-match': '"1"' }),
    });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({
      code: 'conflict',
      field: 'expectedVersion',
      details: { currentVersion: 2 },
    });
    const createOnly = await fetch(`${base}/wiki/team/pages/notes`, {
      method: 'PUT',
      ...json({ content: 'x' }, { 'if-none-match': '*' }),
    });
    expect(createOnly.status).toBe(409);
    expect(wiki.last('wiki.put')?.payload).toMatchObject({ expectedVersion: 0 });
  });

  test.each([
    ['workspace all', '/wiki/all/pages/a', json({ content: 'x' }), 'workspace'],
    [
      'a ".." segment (sent encoded, as clients normalize a raw one away)',
      '/wiki/team/pages/a/..%2Fb',
      json({ content: 'x' }),
      'path',
    ],
    ['a space in the path', '/wiki/team/pages/a%20b', json({ content: 'x' }), 'path'],
    ['content not a string', '/wiki/team/pages/a', json({ content: 1 }), 'content'],
    ['an unknown body field', '/wiki/team/pages/a', json({ content: 'x', title: 't' }), ''],
    ['no body', '/wiki/team/pages/a', { headers: {} }, 'content'],
    ['a weak If-Match', '/wiki/team/pages/a', json({ content: 'x' }, { 'if-match': 'W/"1"' }), 'If-Match'],
    ['If-Match: *', '/wiki/team/pages/a', json({ content: 'x' }, { 'if-match': '*' }), 'If-Match'],
    ['bad frontmatter (the service says so)', '/wiki/team/pages/a', json({ content: '---\n[x\n---\n' }), 'content'],
  ])('400 invalid_request for %s', async (_name, path, init, field) => {
    const res = await fetch(`${base}${path}`, { method: 'PUT', ...init });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; field?: string; requestId?: string };
    expect(body.code).toBe('invalid_request');
    if (field !== '') expect(body.field).toBe(field);
    expect(body.requestId).toBeDefined();
  });

  test('a viewer or operator may not write: 403 unauthorized, nothing sent to the service (dagu-model §9, §10)', async () => {
    const before = wiki.calls.length;
    for (const role of ['viewer', 'operator']) {
      const res = await fetch(`${base}/wiki/team/pages/a`, {
        method: 'PUT',
        ...json({ content: 'x' }, { 'x-test-role': role }),
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'unauthorized' });
    }
    expect(wiki.calls.length).toBe(before);
  });

  test('a Markdown body over the page limit is 413', async () => {
    const res = await fetch(`${base}/wiki/team/pages/big`, {
      method: 'PUT',
      headers: { 'content-type': 'text/markdown' },
      body: 'x'.repeat(WIKI_PAGE_MAX_BYTES + 1),
    });
    expect(res.status).toBe(413);
  });
});

describe('GET and DELETE /api/v1/wiki/{workspace}/pages/{path}', () => {
  test('GET: the page JSON with ETag, or the Markdown with Accept: text/markdown; viewers may read', async () => {
    const page = await fetch(`${base}/wiki/team/pages/runbooks/deploy`, { headers: { 'x-test-role': 'viewer' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('etag')).toBe('"2"');
    expect(await page.json()).toMatchObject({
      id: 'runbooks/deploy',
      content: '# Deploy v2\n',
      mimeType: 'text/markdown',
    });
    const markdown = await fetch(`${base}/wiki/team/pages/runbooks/deploy`, { headers: { accept: 'text/markdown' } });
    expect(markdown.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(await markdown.text()).toBe('# Deploy v2\n');
  });

  test('DELETE: 204, honours If-Match, then the page is 404', async () => {
    expect(
      (await fetch(`${base}/wiki/team/pages/notes`, { method: 'DELETE', headers: { 'if-match': '"2"' } })).status,
    ).toBe(204);
    expect(wiki.last('wiki.delete')?.payload).toEqual({ workspace: 'team', path: 'notes', expectedVersion: 2 });
    const gone = await fetch(`${base}/wiki/team/pages/notes`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 'resource_not_found' });
    expect(
      (await fetch(`${base}/wiki/team/pages/notes`, { method: 'DELETE', headers: { 'x-test-role': 'viewer' } })).status,
    ).toBe(403);
  });
});

describe('GET /api/v1/wiki/{workspace}/pages', () => {
  test('maps the spec 021 wiki query; workspace all lists every workspace', async () => {
    const res = await fetch(`${base}/wiki/all/pages?flat=true&perPage=5&sort=mtime&order=desc&prefix=runbooks%2F`);
    expect(res.status).toBe(200);
    expect(wiki.last('wiki.list')?.payload).toEqual({
      workspace: 'all',
      flat: true,
      perPage: 5,
      sort: 'mtime',
      order: 'desc',
      prefix: 'runbooks/',
    });
    expect(await res.json()).toMatchObject({
      items: expect.arrayContaining([expect.objectContaining({ id: 'runbooks/deploy' })]),
    });
  });

  test.each([
    ['perPage=0', 'perPage'],
    ['sort=size', 'sort'],
    ['flat=yes', 'flat'],
    ['prefix=..%2Fx', 'prefix'],
    ['bogus=1', ''],
  ])('400 invalid_request for ?%s', async (query, field) => {
    const res = await fetch(`${base}/wiki/team/pages?${query}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; field?: string };
    expect(body.code).toBe('invalid_request');
    if (field !== '') expect(body.field).toBe(field);
  });

  test('the OpenAPI document lists the wiki routes with their roles', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-dagu-role'?: string }>>;
    };
    const page = doc.paths['/api/v1/wiki/{workspace}/pages/{path}'];
    expect(page?.put?.['x-dagu-role']).toBe('developer');
    expect(page?.delete?.['x-dagu-role']).toBe('developer');
    expect(page?.get?.['x-dagu-role']).toBe('viewer');
    expect(doc.paths['/api/v1/wiki/{workspace}/pages']?.get?.['x-dagu-role']).toBe('viewer');
  });
});
