import type { Migration } from '@dagu-mcp/runtime';

/** dag-service schema migrations, applied in id order on start. */
export const DAG_MIGRATIONS: readonly Migration[] = [];
