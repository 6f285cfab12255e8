import { MUTATION_LOG_REQUEST_INDEX_SQL, MUTATION_LOG_SQL, type Migration } from '@dagu-mcp/runtime';

/**
 * wiki-service schema migrations, applied in id order on start by `migrate`
 * (runtime) inside the service's own schema (search path `<schema>, public`).
 *
 * `001_create_wiki` (docs/architecture.md "Data"; dagu-model §2, §7):
 *
 * `workspaces` — every workspace a page was ever written to. A workspace
 * comes into being with its first page and stays when its pages are deleted.
 *
 * `pages` — one row per page:
 *
 * | Column | Meaning |
 * | --- | --- |
 * | `workspace`, `path` | the page's identity; `COLLATE "C"` so orderings and the search cursor follow code-unit order, as JavaScript compares |
 * | `name_key`, `type_key` | tree-order sort keys of the path (`pages/page-keys.ts`), for `sort=name` and `sort=type` |
 * | `content` | the Markdown exactly as written, frontmatter included |
 * | `title`, `tags` | read from the frontmatter on write (`pages/frontmatter.ts`) |
 * | `search_text` | `lower(title || E'\n' || content)`, written with the page: what search matches against |
 * | `size` | UTF-8 bytes of `content` |
 * | `version` | 1 on create, +1 on every change (REST `ETag`, `If-Match`) |
 * | `created_at`, `updated_at`, `updated_by` | timestamps and the subject of the last writer |
 *
 * A collection page is an index-only scan in the requested order (one index
 * per sort, each carrying `path`, with and without a workspace) that picks
 * the page's keys — OFFSET skips index entries, not rows — then fetches just
 * those rows, plus an index-only count. Search is `search_text LIKE
 * lower('%text%')`: a case-sensitive LIKE on text lowered once at write time
 * costs a fraction of an ILIKE (which lowers every row on every search), and
 * one pg_trgm GIN index serves it. Decompressing `search_text` is most of
 * what a search costs per row, hence its storage settings below. pg_trgm lives in `public`, shared by every schema of the
 * database; the advisory lock (the same key dag-service takes) keeps two
 * services migrating at once from racing on `CREATE EXTENSION`.
 */
export const WIKI_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_create_wiki',
    sql: `
SELECT pg_advisory_xact_lock(hashtext('dagu-mcp:create-extension:pg_trgm'));
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

CREATE TABLE workspaces (
  name       text COLLATE "C" PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE pages (
  workspace  text COLLATE "C" NOT NULL REFERENCES workspaces (name),
  path       text COLLATE "C" NOT NULL,
  name_key   text COLLATE "C" NOT NULL,
  type_key   text COLLATE "C" NOT NULL,
  content    text        NOT NULL,
  title      text        NOT NULL,
  tags       text[]      NOT NULL DEFAULT '{}',
  search_text text       NOT NULL,
  size       integer     NOT NULL CHECK (size >= 0),
  version    integer     NOT NULL DEFAULT 1 CHECK (version > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text        NOT NULL,
  PRIMARY KEY (workspace, path)
);

-- sort=name / sort=type, one workspace or all (ORDER BY workspace, key); path for index-only paging.
CREATE INDEX pages_name_key_idx ON pages (workspace, name_key) INCLUDE (path);
CREATE INDEX pages_type_key_idx ON pages (workspace, type_key) INCLUDE (path);
-- sort=mtime: one workspace, and all workspaces.
CREATE INDEX pages_workspace_mtime_idx ON pages (workspace, updated_at, path);
CREATE INDEX pages_mtime_idx ON pages (updated_at, workspace, path);
-- wiki_search: search_text LIKE '%text%' (already lowered).
CREATE INDEX pages_search_trgm_idx ON pages USING gin (search_text gin_trgm_ops);

-- Search reads search_text of many rows: keep it in the row (MAIN: compressed
-- in place, moved out only as a last resort) so a typical page's body goes to
-- TOAST instead, and compress with lz4, which decompresses several times faster
-- than pglz. lz4 needs PostgreSQL 14+ built with it; without, pglz stays.
ALTER TABLE pages ALTER COLUMN search_text SET STORAGE MAIN;
DO $$
BEGIN
  ALTER TABLE pages ALTER COLUMN search_text SET COMPRESSION lz4;
  ALTER TABLE pages ALTER COLUMN content SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'lz4 compression unavailable (%); pages keep the default compression', SQLERRM;
END
$$;
`,
  },
  {
    // The mutation record: audit outbox, outcome and idempotency record (docs/decisions.md "Attribution and mutation outcomes").
    id: '002_mutation_log',
    sql: MUTATION_LOG_SQL,
  },
  {
    // Finds a change by the gateway request that sent it (mutation.outcome by request id).
    id: '003_mutation_log_request',
    sql: MUTATION_LOG_REQUEST_INDEX_SQL,
  },
];
