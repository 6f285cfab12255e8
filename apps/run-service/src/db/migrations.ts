import type { Migration } from '@dagu-mcp/runtime';

/** run-service schema migrations, applied in id order on start. */
export const RUN_MIGRATIONS: readonly Migration[] = [];
