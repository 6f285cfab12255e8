import { DaguError } from '@dagu-mcp/contracts';
import { createTestSchema, type TestSchema } from '../../test-fixtures/pg-test-schema';
import { dagYaml, rejectionOf } from '../../test-fixtures/handler-context';
import { DagCatalog } from './dag.catalog';
import { DagRepository } from './dag.repository';

/**
 * DAG search (spec 021 `dag_search`, DAG search model: results with `name`,
 * `uri`, line snippets, `hasMoreMatches`; `hasMore` and an opaque
 * `nextCursor`; dagu-model §10 workspace filter) against the real PostgreSQL.
 */
let db: TestSchema;
let catalog: DagCatalog;

beforeAll(async () => {
  db = await createTestSchema('search');
  catalog = new DagCatalog(new DagRepository(db.pool));
  const apply = (name: string, spec: string) => catalog.upsert({ name, spec }, Date.now() + 5000);
  await apply(
    'ops-backup',
    dagYaml({ labels: ['workspace=ops'], commands: ['pg_dump main > /backup/main.sql', 'gzip /backup/main.sql'] }),
  );
  await apply(
    'ops-cleanup',
    dagYaml({ labels: ['workspace=ops'], commands: ['rm -rf /tmp/old', 'echo Cleanup done'] }),
  );
  await apply(
    'data-load',
    dagYaml({ labels: ['workspace=data'], commands: ['python load.py --discount 50%', 'echo LOAD'] }),
  );
  await apply('no-workspace', dagYaml({ commands: Array.from({ length: 7 }, (_, i) => `echo backup part ${i}`) }));
  for (let i = 0; i < 5; i += 1) await apply(`page-${i}`, dagYaml({ description: 'paging marker' }));
});

afterAll(async () => {
  await db.drop();
});

describe('dag.search', () => {
  it('finds DAGs whose YAML contains the text, case-insensitively, with line snippets', async () => {
    const reply = await catalog.search({ search: 'BACKUP' });
    expect(reply.hasMore).toBe(false);
    expect(reply).not.toHaveProperty('nextCursor');
    expect(reply.results.map((result) => result.name)).toEqual(['no-workspace', 'ops-backup']);
    expect(reply.results[1]).toEqual({
      name: 'ops-backup',
      uri: 'dagu://dags/ops-backup/spec',
      matches: [
        { line: 4, text: '    run: "pg_dump main > /backup/main.sql"' },
        { line: 6, text: '    run: "gzip /backup/main.sql"' },
      ],
      hasMoreMatches: false,
    });
  });

  it('returns at most 5 matching lines per DAG and says when there are more', async () => {
    const reply = await catalog.search({ search: 'backup part' });
    const [result] = reply.results;
    expect(result?.matches.map((match) => match.line)).toEqual([3, 5, 7, 9, 11]);
    expect(result?.hasMoreMatches).toBe(true);
  });

  it('takes LIKE wildcards in the search text literally', async () => {
    expect((await catalog.search({ search: '50%' })).results.map((result) => result.name)).toEqual(['data-load']);
    expect((await catalog.search({ search: '%' })).results.map((result) => result.name)).toEqual(['data-load']);
    expect((await catalog.search({ search: 'pg_' })).results.map((result) => result.name)).toEqual(['ops-backup']);
  });

  it('filters by workspace label; `all` and no workspace search everything', async () => {
    const names = async (workspace?: string) =>
      (await catalog.search({ search: 'echo', ...(workspace !== undefined ? { workspace } : {}) })).results.map(
        (r) => r.name,
      );
    expect(await names('ops')).toEqual(['ops-cleanup']);
    expect(await names('data')).toEqual(['data-load']);
    expect(await names('nowhere')).toEqual([]);
    expect(await names('all')).toEqual(await names());
    expect(await names()).toEqual(expect.arrayContaining(['data-load', 'no-workspace', 'ops-cleanup', 'page-0']));
  });

  it('pages with limit and an opaque cursor, by name, until hasMore is false', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await catalog.search({
        search: 'paging marker',
        limit: 2,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      pages += 1;
      seen.push(...reply.results.map((result) => result.name));
      expect(reply.hasMore).toBe(reply.nextCursor !== undefined);
      cursor = reply.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
  });

  it('defaults to 10 results per page', async () => {
    for (let i = 0; i < 8; i += 1) {
      await catalog.upsert({ name: `bulk-${i}`, spec: dagYaml({ description: 'paging marker' }) }, Date.now() + 5000);
    }
    const reply = await catalog.search({ search: 'paging marker' });
    expect(reply.results).toHaveLength(10);
    expect(reply.hasMore).toBe(true);
    const rest = await catalog.search({ search: 'paging marker', cursor: reply.nextCursor ?? '' });
    expect(rest.results).toHaveLength(3);
    expect(rest.hasMore).toBe(false);
  });

  it('refuses a malformed cursor, or one of another search, as invalid_tool_input on cursor', async () => {
    const first = await catalog.search({ search: 'paging marker', limit: 1 });
    for (const request of [
      { search: 'paging marker', cursor: 'garbage!' },
      { search: 'paging marker', cursor: Buffer.from('{"after":"x"}').toString('base64url') },
      { search: 'echo', cursor: first.nextCursor ?? '' },
      { search: 'paging marker', workspace: 'ops', cursor: first.nextCursor ?? '' },
    ]) {
      const error = await rejectionOf(catalog.search(request));
      expect(error).toBeInstanceOf(DaguError);
      expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'cursor' });
    }
  });

  it('finds nothing for text no DAG contains', async () => {
    expect(await catalog.search({ search: 'no dag says this' })).toEqual({ results: [], hasMore: false });
  });
});
