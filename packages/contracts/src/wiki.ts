import { z } from 'zod';
import { PaginationSchema, SearchMatchSchema } from './dag';
import { WikiQuerySchema } from './read-query';
import { isValidWikiPath, isValidWikiPathPrefix, isValidWikiWorkspace } from './uri-names';

/**
 * wiki-service op payloads and replies (issue: wiki pages per workspace).
 * The gateway validates before sending and wiki-service re-validates off the
 * bus (docs/architecture.md "Request flow"). Shapes follow spec 021's Wiki models and
 * dagu-model §2 / §7; fields beyond the spec minimum are additive extras.
 */

/** Default largest page body, in UTF-8 bytes (1 MiB); the gateway's `WIKI_PAGE_MAX_BYTES` sets the effective one. */
export const WIKI_PAGE_MAX_BYTES = 1_048_576;
/** Hard cap of a page body any configuration may allow, in UTF-8 bytes (16 MiB): keeps one bus job bounded. */
export const WIKI_PAGE_HARD_MAX_BYTES = 16 * 1_048_576;
/** Longest page path, in characters. Decision: no spec bound; generous for nested folders. */
export const WIKI_PATH_MAX_LENGTH = 1024;
/** Longest search text, in characters. */
export const WIKI_SEARCH_MAX_LENGTH = 256;

/** A workspace that names one workspace (dagu-model §2 charset via `isValidWikiWorkspace`), never `all`. */
export const WikiWorkspaceSchema = z
  .string()
  .refine((w) => w !== 'all' && isValidWikiWorkspace(w), { error: 'must name one valid workspace (not all)' });

/** A workspace selector: one workspace, or `all` (every workspace). Absent means `all` (spec 021 `workspace`). */
export const WikiWorkspaceSelectorSchema = z
  .string()
  .refine(isValidWikiWorkspace, { error: 'must be a valid workspace name or all' });

/** A page path (dagu-model §2): `[A-Za-z0-9._-]` segments joined by `/`, no `..`, no `.md` suffix. */
export const WikiPathSchema = z
  .string()
  .max(WIKI_PATH_MAX_LENGTH)
  .refine(isValidWikiPath, { error: 'must be a wiki page path: segments of A-Z a-z 0-9 . _ - joined by /' });

/** A path prefix (spec 021 `prefix`): a path, a folder ending in `/`, or a partial last segment. */
export const WikiPrefixSchema = z
  .string()
  .max(WIKI_PATH_MAX_LENGTH)
  .refine(isValidWikiPathPrefix, { error: 'must be a valid wiki page path prefix' });

/**
 * `wiki.list` request: the spec 021 `wiki` query plus the workspace selector.
 * Defaults (applied by the service): `page` 1, `perPage` 50, `flat` false,
 * `sort` `type` (folders first), `order` `asc`, no prefix.
 */
export const WikiListRequestSchema = WikiQuerySchema.extend({ workspace: WikiWorkspaceSelectorSchema.optional() });
export type WikiListRequest = z.infer<typeof WikiListRequestSchema>;

/** Page facts every listing carries. `updatedAt` is RFC 3339 with ms, UTC. */
const PageFacts = {
  /** The page path (spec 021: entries carry `id` strings). */
  id: z.string(),
  /** Last path segment. */
  name: z.string(),
  workspace: z.string(),
  /** Canonical `dagu://wiki/{workspace}/{path}` (path as one percent-encoded segment). */
  uri: z.string(),
  /** Frontmatter `title`, else the first `# heading`, else `name`. */
  title: z.string(),
  tags: z.array(z.string()),
  /** Body size in UTF-8 bytes. */
  size: z.number().int().min(0),
  /** 1 on create, +1 on every change. */
  version: z.number().int().min(1),
  updatedAt: z.string(),
};

/** A page in a flat listing or as a tree leaf (`type: 'file'`, as Dagu names doc leaves). */
export const WikiPageEntrySchema = z.object({ type: z.literal('file'), ...PageFacts });
export type WikiPageEntry = z.infer<typeof WikiPageEntrySchema>;

/** A folder of the tree: `id` is the folder path; `updatedAt` the newest page below it on this page of results. */
export interface WikiDirectoryNode {
  type: 'directory';
  id: string;
  name: string;
  workspace: string;
  updatedAt: string;
  children: WikiTreeNode[];
}

/** A workspace at the top of an all-workspaces tree: `id` is the workspace name, `uri` its collection URI. */
export interface WikiWorkspaceNode {
  type: 'workspace';
  id: string;
  name: string;
  workspace: string;
  uri: string;
  updatedAt: string;
  children: WikiTreeNode[];
}

export type WikiTreeNode = WikiPageEntry | WikiDirectoryNode | WikiWorkspaceNode;

/** A tree node, recursive (spec 021 Wiki collection, tree mode). */
export const WikiTreeNodeSchema: z.ZodType<WikiTreeNode> = z.lazy(() =>
  z.discriminatedUnion('type', [
    WikiPageEntrySchema,
    z.object({
      type: z.literal('directory'),
      id: z.string(),
      name: z.string(),
      workspace: z.string(),
      updatedAt: z.string(),
      children: z.array(WikiTreeNodeSchema),
    }),
    z.object({
      type: z.literal('workspace'),
      id: z.string(),
      name: z.string(),
      workspace: z.string(),
      uri: z.string(),
      updatedAt: z.string(),
      children: z.array(WikiTreeNodeSchema),
    }),
  ]),
);

/**
 * `wiki.list` reply (spec 021 Wiki collection model): `tree` in tree mode,
 * `items` in flat mode, and `pagination`. Pagination counts pages (leaves):
 * a tree page holds the folders of the pages on it.
 */
export const WikiListReplySchema = z.object({
  tree: z.array(WikiTreeNodeSchema).optional(),
  items: z.array(WikiPageEntrySchema).optional(),
  pagination: PaginationSchema,
  /** The workspace listed; absent when every workspace was. */
  workspace: z.string().optional(),
  flat: z.boolean(),
  sort: z.enum(['name', 'type', 'mtime']),
  order: z.enum(['asc', 'desc']),
});
export type WikiListReply = z.infer<typeof WikiListReplySchema>;

/** `wiki.get` / `wiki.delete` address: one page of one workspace. */
export const WikiPageRefSchema = z.strictObject({ workspace: WikiWorkspaceSchema, path: WikiPathSchema });
export type WikiPageRef = z.infer<typeof WikiPageRefSchema>;

/** Page metadata: the listing facts plus who wrote it and when. */
export const WikiPageMetaSchema = z.object({
  ...PageFacts,
  path: z.string(),
  createdAt: z.string(),
  /** Subject of the principal of the latest change. */
  updatedBy: z.string(),
});
export type WikiPageMeta = z.infer<typeof WikiPageMetaSchema>;

/** `wiki.get` reply (spec 021 Wiki page model): `id`, `content`, `mimeType`, `uri` plus the metadata. */
export const WikiPageSchema = WikiPageMetaSchema.extend({
  content: z.string(),
  mimeType: z.literal('text/markdown'),
});
export type WikiPage = z.infer<typeof WikiPageSchema>;

/**
 * `wiki.put` request: create or replace one page. `content` is the Markdown,
 * optional YAML frontmatter (`title`, `tags`) included, stored verbatim.
 * `expectedVersion` (optional): `0` = the page must not exist yet, `N` = its
 * current version must be `N`; otherwise `conflict`.
 */
export const WikiPutRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  path: WikiPathSchema,
  content: z.string().refine((c) => Buffer.byteLength(c, 'utf8') <= WIKI_PAGE_HARD_MAX_BYTES, {
    error: `must be at most ${WIKI_PAGE_HARD_MAX_BYTES} bytes of UTF-8`,
  }),
  expectedVersion: z.number().int().min(0).optional(),
});
export type WikiPutRequest = z.infer<typeof WikiPutRequestSchema>;

/** `wiki.put` reply: the stored page's metadata; `created` for a new page, `changed` false when the content was identical. */
export const WikiPutReplySchema = z.object({ page: WikiPageMetaSchema, created: z.boolean(), changed: z.boolean() });
export type WikiPutReply = z.infer<typeof WikiPutReplySchema>;

/** `wiki.delete` request; `expectedVersion` (≥ 1) must match the current version when given. */
export const WikiDeleteRequestSchema = WikiPageRefSchema.extend({
  expectedVersion: z.number().int().min(1).optional(),
});
export type WikiDeleteRequest = z.infer<typeof WikiDeleteRequestSchema>;

export const WikiDeleteReplySchema = z.object({ workspace: z.string(), path: z.string(), version: z.number().int() });
export type WikiDeleteReply = z.infer<typeof WikiDeleteReplySchema>;

/**
 * `wiki.rename` request (Dagu spec 022b `rename_wiki_page`): the page moves
 * from `path` to `newPath` in its workspace; links to it are not rewritten.
 */
export const WikiRenameRequestSchema = WikiPageRefSchema.extend({ newPath: WikiPathSchema });
export type WikiRenameRequest = z.infer<typeof WikiRenameRequestSchema>;

/** `wiki.rename` reply: the page under its new `path`, with `previousPath`. */
export const WikiRenameReplySchema = z.object({
  workspace: z.string(),
  path: z.string(),
  previousPath: z.string(),
  version: z.number().int(),
});
export type WikiRenameReply = z.infer<typeof WikiRenameReplySchema>;

/**
 * `wiki.check` request (Dagu spec 022b preview of the wiki types): runs every
 * check the write of `kind` would run — the source page exists (rename,
 * delete), the target is free (rename), the content is valid (upsert) — and
 * writes nothing. Not a mutation: any role may preview.
 */
export const WikiCheckRequestSchema = z.strictObject({
  kind: z.enum(['upsert', 'rename', 'delete']),
  workspace: WikiWorkspaceSchema,
  path: WikiPathSchema,
  newPath: WikiPathSchema.optional(),
  content: WikiPutRequestSchema.shape.content.optional(),
});
export type WikiCheckRequest = z.infer<typeof WikiCheckRequestSchema>;

/** `wiki.check` reply: `valid` with the content's `errors`; `exists` whether the page at `path` exists now. */
export const WikiCheckReplySchema = z.object({ valid: z.boolean(), errors: z.array(z.string()), exists: z.boolean() });
export type WikiCheckReply = z.infer<typeof WikiCheckReplySchema>;

/** `wiki.search` request (spec 021 `wiki_search`): `limit` 1–50, default 20; `workspace` absent or `all` = every workspace. */
export const WikiSearchRequestSchema = z.strictObject({
  search: z.string().min(1).max(WIKI_SEARCH_MAX_LENGTH),
  workspace: WikiWorkspaceSelectorSchema.optional(),
  prefix: WikiPrefixSchema.optional(),
  cursor: z.string().min(1).optional(),
  limit: z.number().int().min(1).max(50).optional(),
});
export type WikiSearchRequest = z.infer<typeof WikiSearchRequestSchema>;

/** One page that matched (spec 021 Wiki search model: `id`, `uri`, `matches`, `hasMoreMatches`). */
export const WikiSearchResultSchema = z.object({
  id: z.string(),
  workspace: z.string(),
  uri: z.string(),
  title: z.string(),
  matches: z.array(SearchMatchSchema),
  hasMoreMatches: z.boolean(),
});
export type WikiSearchResult = z.infer<typeof WikiSearchResultSchema>;

export const WikiSearchReplySchema = z.object({
  results: z.array(WikiSearchResultSchema),
  hasMore: z.boolean(),
  nextCursor: z.string().optional(),
});
export type WikiSearchReply = z.infer<typeof WikiSearchReplySchema>;
