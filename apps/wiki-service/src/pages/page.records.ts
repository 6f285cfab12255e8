import { z } from 'zod';
import { formatDaguUri, type WikiPage, type WikiPageEntry, type WikiPageMeta } from '@dagu-mcp/contracts';
import { pageNameOf } from './page-keys';

/**
 * The stored shapes of a page (table `pages`, see db/migrations.ts) and their
 * wire forms (contracts `wiki.ts`). Rows from pg are parsed with zod, not
 * cast, so a schema drift fails loudly as `internal_error` instead of
 * leaking a wrong shape into a reply.
 */

/** Columns of a listing entry (no body). */
export const ENTRY_COLUMNS = 'workspace, path, title, tags, size, version, updated_at';
/** Columns of page metadata. */
export const META_COLUMNS = `${ENTRY_COLUMNS}, created_at, updated_by`;
/** Every column a page read returns. */
export const PAGE_COLUMNS = `${META_COLUMNS}, content`;

/**
 * SQL of the `search_text` column from the title and content parameters
 * (e.g. `'$4'`, `'$3'`): lowered by PostgreSQL itself, so it folds case
 * exactly as the `lower()` applied to the search pattern does.
 */
export function searchTextSql(titleParam: string, contentParam: string): string {
  return `lower(${titleParam}::text || E'\\n' || ${contentParam}::text)`;
}

const EntryRowSchema = z.object({
  workspace: z.string(),
  path: z.string(),
  title: z.string(),
  tags: z.array(z.string()),
  size: z.number().int(),
  version: z.number().int(),
  updated_at: z.date(),
});
const MetaRowSchema = EntryRowSchema.extend({ created_at: z.date(), updated_by: z.string() });
const PageRowSchema = MetaRowSchema.extend({ content: z.string() });

/** A listed page as the tree builder sees it. */
export interface PageEntryRecord {
  workspace: string;
  path: string;
  title: string;
  tags: string[];
  /** UTF-8 bytes of the content. */
  size: number;
  version: number;
  updatedAt: Date;
}

/** Page metadata: an entry plus creation time and last writer. */
export interface PageMetaRecord extends PageEntryRecord {
  createdAt: Date;
  /** Principal subject of the latest change. */
  updatedBy: string;
}

/** A whole stored page. */
export interface PageRecord extends PageMetaRecord {
  content: string;
}

function entryOf(row: z.output<typeof EntryRowSchema>): PageEntryRecord {
  return {
    workspace: row.workspace,
    path: row.path,
    title: row.title,
    tags: row.tags,
    size: row.size,
    version: row.version,
    updatedAt: row.updated_at,
  };
}

/** Parses a row selected with {@link ENTRY_COLUMNS}. @throws ZodError on a shape drift */
export function parseEntryRow(row: unknown): PageEntryRecord {
  return entryOf(EntryRowSchema.parse(row));
}

/** Parses a row selected with {@link META_COLUMNS}. @throws ZodError on a shape drift */
export function parseMetaRow(row: unknown): PageMetaRecord {
  const parsed = MetaRowSchema.parse(row);
  return { ...entryOf(parsed), createdAt: parsed.created_at, updatedBy: parsed.updated_by };
}

/** Parses a row selected with {@link PAGE_COLUMNS}. @throws ZodError on a shape drift */
export function parsePageRow(row: unknown): PageRecord {
  const parsed = PageRowSchema.parse(row);
  return { ...entryOf(parsed), createdAt: parsed.created_at, updatedBy: parsed.updated_by, content: parsed.content };
}

/** Canonical `dagu://wiki/{workspace}/{path}` of a page (the path is one percent-encoded segment, dagu-model §2). */
export function pageUriOf(workspace: string, path: string): string {
  return formatDaguUri({ kind: 'wiki_page', workspace, path });
}

/** The wire form of a listed page (`type: 'file'`). Timestamps are RFC 3339 with ms, UTC. */
export function toPageEntry(record: PageEntryRecord): WikiPageEntry {
  return {
    type: 'file',
    id: record.path,
    name: pageNameOf(record.path),
    workspace: record.workspace,
    uri: pageUriOf(record.workspace, record.path),
    title: record.title,
    tags: record.tags,
    size: record.size,
    version: record.version,
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** The wire form of page metadata (the `wiki.put` reply's `page`). */
export function toPageMeta(record: PageMetaRecord): WikiPageMeta {
  const { type: _type, ...entry } = toPageEntry(record);
  return { ...entry, path: record.path, createdAt: record.createdAt.toISOString(), updatedBy: record.updatedBy };
}

/** The spec 021 Wiki page model: `id`, `content`, `mimeType: text/markdown`, `uri`, plus metadata. */
export function toWikiPage(record: PageRecord): WikiPage {
  return { ...toPageMeta(record), content: record.content, mimeType: 'text/markdown' };
}
