import type { Migration } from '@dagu-mcp/runtime';

/** wiki-service schema migrations, applied in id order on start. */
export const WIKI_MIGRATIONS: readonly Migration[] = [];
