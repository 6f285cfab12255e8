import type { Migration } from '@dagu-mcp/runtime';

/** Gateway schema migrations (users, API keys, sessions, audit arrive with their issues). */
export const GATEWAY_MIGRATIONS: readonly Migration[] = [];
