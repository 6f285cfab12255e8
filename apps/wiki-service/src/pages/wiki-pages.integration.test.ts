import type { WikiTreeNode } from '@dagu-mcp/contracts';
import { createTestDb, deadlineIn, DEVELOPER, VIEWER, type TestDb } from '../../test-fixtures/wiki-test-db';
import { readWikiCollection } from './wiki-collection';
import { readWikiPage } from './wiki-page';
import { searchWiki } from './wiki-search';
import { daguErrorOf } from '../../../../packages/contracts/test-fixtures/dagu-error-of';
import { deleteWikiPage, putWikiPage } from './wiki-write';

/**
 * The wiki domain against the real PostgreSQL (CONTRIBUTING §10): writes,
 * the collection in tree and flat mode, page reads and search, each rule
 * named after the spec it proves (021 Wiki models, dagu-model §2, §7, §9).
 */
let db: TestDb;
const writer = { principal: DEVELOPER, deadline: 0 };
const put = (workspace: string, path: string, content: string, expectedVersion?: number) =>
  putWikiPage(
    db.pool,
    { workspace, path, content, ...(expectedVersion !== undefined ? { expectedVersion } : {}) },
    { ...writer, deadline: deadlineIn(5000) },
  );

function leaves(nodes: readonly WikiTreeNode[]): string[] {
  return nodes.flatMap((node) => (node.type === 'file' ? [`${node.workspace}:${node.id}`] : leaves(node.children)));
}

beforeAll(async () => {
  db = await createTestDb('pages');
  await put(
    'team',
    'runbooks/deploy',
    '---\ntitle: Deploy runbook\ntags: [ops, deploy]\n---\nStep 1: run the Deploy job\nStep 2: verify\n',
  );
  await put('team', 'runbooks/db_restore', '# Restore\nRestore the database from the nightly dump.\n');
  await put('team', 'readme', 'Welcome to the team wiki.\n');
  await put('ops', 'oncall', 'Who is on call this week; page them for a deploy failure.\n');
});

afterAll(async () => {
  await db.drop();
});

describe('writes (REST PUT/DELETE semantics, dagu-model §7, §9)', () => {
  test('create then update bumps the version; identical content writes nothing', async () => {
    const created = await put('scratch', 'notes/a', 'one');
    expect(created).toMatchObject({
      created: true,
      changed: true,
      page: { id: 'notes/a', version: 1, title: 'a', size: 3, updatedBy: 'dana' },
    });
    const same = await put('scratch', 'notes/a', 'one');
    expect(same).toMatchObject({ created: false, changed: false, page: { version: 1 } });
    const updated = await put('scratch', 'notes/a', '---\ntitle: A\n---\ntwo é');
    expect(updated).toMatchObject({ created: false, changed: true, page: { version: 2, title: 'A', size: 23 } });
  });

  test('expectedVersion: 0 creates only, N updates only version N (conflict with currentVersion)', async () => {
    expect((await daguErrorOf(put('scratch', 'notes/a', 'x', 0))).toServiceError()).toMatchObject({
      code: 'conflict',
      field: 'expectedVersion',
      details: { currentVersion: 2 },
    });
    expect((await daguErrorOf(put('scratch', 'notes/a', 'x', 1))).code).toBe('conflict');
    expect((await daguErrorOf(put('scratch', 'notes/new', 'x', 3))).details).toEqual({ currentVersion: 0 });
    expect((await put('scratch', 'notes/a', 'three', 2)).page.version).toBe(3);
  });

  test('concurrent creates of one page: exactly one wins (atomic version check)', async () => {
    const attempts = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => put('scratch', 'race', `v${i}`, 0)));
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
  });

  test('bad frontmatter is refused on content; viewers may not write', async () => {
    expect((await daguErrorOf(put('scratch', 'bad', '---\n[a\n---\n'))).toServiceError()).toMatchObject({
      code: 'invalid_tool_input',
      field: 'content',
    });
    const asViewer = putWikiPage(
      db.pool,
      { workspace: 'scratch', path: 'v', content: 'x' },
      { principal: VIEWER, deadline: deadlineIn(5000) },
    );
    expect((await daguErrorOf(asViewer)).code).toBe('unauthorized');
  });

  test('a write whose deadline passes while it waits is never applied (docs/architecture.md "Request flow")', async () => {
    const holder = await db.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', ['dagu-mcp:wiki-page:scratch/locked']);
      const late = putWikiPage(
        db.pool,
        { workspace: 'scratch', path: 'locked', content: 'late' },
        { principal: DEVELOPER, deadline: deadlineIn(200) },
      );
      expect((await daguErrorOf(late)).code).toBe('resource_unavailable');
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()');
      holder.release();
    }
    expect((await daguErrorOf(readWikiPage(db.pool, { workspace: 'scratch', path: 'locked' }))).code).toBe(
      'resource_not_found',
    );
  });

  test('a write that waited for the page lock is stamped after the version it waited for', async () => {
    await put('scratch', 'notes/timed', 'one');
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        'dagu-mcp:wiki-page:scratch/notes/timed',
      ]);
      // Begins its transaction now, then waits for the lock while the holder writes version 2, 50 ms later.
      const waiting = put('scratch', 'notes/timed', 'three');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = await holder.query<{ updated_at: Date }>(
        "UPDATE pages SET content = 'two', version = version + 1, updated_at = clock_timestamp() WHERE workspace = 'scratch' AND path = 'notes/timed' RETURNING updated_at",
      );
      await holder.query('COMMIT');
      const third = await waiting;
      expect(third.page.version).toBe(3);
      expect(Date.parse(third.page.updatedAt)).toBeGreaterThanOrEqual(
        second.rows[0]?.updated_at.getTime() ?? Number.POSITIVE_INFINITY,
      );
    } finally {
      holder.release();
    }
  });

  test('delete removes the page; the version must match when given; a second delete is not found', async () => {
    await put('scratch', 'gone', 'bye');
    const ctx = { principal: DEVELOPER, deadline: deadlineIn(5000) };
    expect(
      (await daguErrorOf(deleteWikiPage(db.pool, { workspace: 'scratch', path: 'gone', expectedVersion: 2 }, ctx)))
        .code,
    ).toBe('conflict');
    expect(await deleteWikiPage(db.pool, { workspace: 'scratch', path: 'gone' }, ctx)).toEqual({
      workspace: 'scratch',
      path: 'gone',
      version: 1,
    });
    expect(
      (await daguErrorOf(deleteWikiPage(db.pool, { workspace: 'scratch', path: 'gone' }, ctx))).toServiceError(),
    ).toMatchObject({ code: 'resource_not_found', field: 'path' });
    expect((await daguErrorOf(deleteWikiPage(db.pool, { workspace: 'nope', path: 'gone' }, ctx))).field).toBe(
      'workspace',
    );
  });
});

describe('page read (spec 021 Wiki page model)', () => {
  test('id, content, mimeType, canonical uri with the path as one encoded segment', async () => {
    const page = await readWikiPage(db.pool, { workspace: 'team', path: 'runbooks/deploy' });
    expect(page).toMatchObject({
      id: 'runbooks/deploy',
      path: 'runbooks/deploy',
      workspace: 'team',
      mimeType: 'text/markdown',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      title: 'Deploy runbook',
      tags: ['ops', 'deploy'],
      version: 1,
      updatedBy: 'dana',
    });
    expect(page.content.startsWith('---\ntitle: Deploy runbook')).toBe(true);
    expect(page.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test('unknown page: resource_not_found on path with didYouMean; unknown workspace: on workspace', async () => {
    const missing = await daguErrorOf(readWikiPage(db.pool, { workspace: 'team', path: 'runbooks/deplo' }));
    expect(missing.toServiceError()).toMatchObject({ code: 'resource_not_found', field: 'path' });
    expect(missing.details?.didYouMean).toEqual(expect.arrayContaining(['runbooks/deploy']));
    expect(Array.isArray(missing.details?.didYouMean) ? missing.details.didYouMean[0] : undefined).toBe(
      'runbooks/deploy',
    );
    const noWorkspace = await daguErrorOf(readWikiPage(db.pool, { workspace: 'nobody', path: 'x' }));
    expect(noWorkspace.toServiceError()).toMatchObject({ code: 'resource_not_found', field: 'workspace' });
  });
});

describe('collection (spec 021 Wiki collection model; query table for wiki)', () => {
  test('tree mode (default): folders first, pages with ids and URIs, pagination', async () => {
    const reply = await readWikiCollection(db.pool, { workspace: 'team' });
    expect(reply).toMatchObject({
      workspace: 'team',
      flat: false,
      sort: 'type',
      order: 'asc',
      pagination: { page: 1, perPage: 50, total: 3, totalPages: 1 },
    });
    expect(reply.items).toBeUndefined();
    expect(leaves(reply.tree ?? [])).toEqual(['team:runbooks/db_restore', 'team:runbooks/deploy', 'team:readme']);
    expect(reply.tree?.[0]).toMatchObject({ type: 'directory', id: 'runbooks', name: 'runbooks' });
  });

  test('flat mode: pages only in items, paged, each with its canonical URI', async () => {
    const first = await readWikiCollection(db.pool, { workspace: 'team', flat: true, sort: 'name', perPage: 2 });
    expect(first.tree).toBeUndefined();
    expect(first.items?.map((i) => i.uri)).toEqual([
      'dagu://wiki/team/readme',
      'dagu://wiki/team/runbooks%2Fdb_restore',
    ]);
    expect(first.pagination).toEqual({ page: 1, perPage: 2, total: 3, totalPages: 2 });
    const second = await readWikiCollection(db.pool, {
      workspace: 'team',
      flat: true,
      sort: 'name',
      perPage: 2,
      page: 2,
    });
    expect(second.items?.map((i) => i.id)).toEqual(['runbooks/deploy']);
    const past = await readWikiCollection(db.pool, { workspace: 'team', flat: true, page: 9 });
    expect(past.items).toEqual([]);
  });

  test('prefix filters by path prefix; "_" is literal; desc and mtime orders', async () => {
    const runbooks = await readWikiCollection(db.pool, { workspace: 'team', flat: true, prefix: 'runbooks/' });
    expect(runbooks.items?.map((i) => i.id)).toEqual(['runbooks/db_restore', 'runbooks/deploy']);
    const literal = await readWikiCollection(db.pool, { workspace: 'team', flat: true, prefix: 'runbooks/db_' });
    expect(literal.items?.map((i) => i.id)).toEqual(['runbooks/db_restore']);
    const desc = await readWikiCollection(db.pool, { workspace: 'team', flat: true, sort: 'name', order: 'desc' });
    expect(desc.items?.map((i) => i.id)).toEqual(['runbooks/deploy', 'runbooks/db_restore', 'readme']);
    const newest = await readWikiCollection(db.pool, {
      workspace: 'team',
      flat: true,
      sort: 'mtime',
      order: 'desc',
      perPage: 1,
    });
    expect(newest.items?.map((i) => i.id)).toEqual(['readme']);
  });

  test('every workspace (absent or all): workspace nodes on top; unknown workspace is not found', async () => {
    const all = await readWikiCollection(db.pool, { workspace: 'all', prefix: 'o' });
    expect(all.workspace).toBeUndefined();
    expect(all.tree?.map((n) => `${n.type}:${n.id}`)).toEqual(['workspace:ops']);
    expect(leaves(all.tree ?? [])).toEqual(['ops:oncall']);
    expect((await readWikiCollection(db.pool, {})).pagination.total).toBeGreaterThanOrEqual(4);
    const unknown = await daguErrorOf(readWikiCollection(db.pool, { workspace: 'nobody' }));
    expect(unknown.toServiceError()).toMatchObject({ code: 'resource_not_found', field: 'workspace' });
  });
});

describe('search (spec 021 Wiki search model; dagu-model §7)', () => {
  test('case-insensitive over bodies and titles, line snippets per page, every workspace by default', async () => {
    const reply = await searchWiki(db.pool, { search: 'DEPLOY' });
    expect(reply.hasMore).toBe(false);
    expect(reply.nextCursor).toBeUndefined();
    expect(reply.results.map((r) => `${r.workspace}:${r.id}`)).toEqual(['ops:oncall', 'team:runbooks/deploy']);
    const deploy = reply.results[1];
    expect(deploy).toMatchObject({
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      title: 'Deploy runbook',
      hasMoreMatches: false,
    });
    expect(deploy?.matches).toEqual([
      { line: 2, text: 'title: Deploy runbook' },
      { line: 3, text: 'tags: [ops, deploy]' },
      { line: 5, text: 'Step 1: run the Deploy job' },
    ]);
  });

  test('a title found from the first heading matches too; workspace and prefix narrow', async () => {
    expect(
      (await searchWiki(db.pool, { search: 'restore', workspace: 'team', prefix: 'runbooks/db' })).results.map(
        (r) => r.id,
      ),
    ).toEqual(['runbooks/db_restore']);
    expect((await searchWiki(db.pool, { search: 'deploy', workspace: 'ops' })).results.map((r) => r.id)).toEqual([
      'oncall',
    ]);
    expect((await searchWiki(db.pool, { search: '100%_' })).results).toEqual([]);
  });

  test('limit and the opaque cursor page through results without repeats', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const reply = await searchWiki(db.pool, { search: 'e', limit: 2, ...(cursor !== undefined ? { cursor } : {}) });
      expect(reply.results.length).toBeLessThanOrEqual(2);
      expect(reply.nextCursor !== undefined).toBe(reply.hasMore);
      seen.push(...reply.results.map((r) => `${r.workspace}:${r.id}`));
      cursor = reply.nextCursor;
    } while (cursor !== undefined);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort());
    expect(seen).toEqual(expect.arrayContaining(['ops:oncall', 'team:readme', 'team:runbooks/deploy']));
    const other = await daguErrorOf(searchWiki(db.pool, { search: 'other', cursor: 'eyJ2IjoxfQ' }));
    expect(other.toServiceError()).toMatchObject({ code: 'invalid_tool_input', field: 'cursor' });
  });
});
