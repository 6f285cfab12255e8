import { wikiOps, type WikiOps } from '@dagu-mcp/contracts';
import { createPingHandler, type ServiceDefinition } from '@dagu-mcp/service-kit';
import { WIKI_MIGRATIONS } from './db/migrations';

/** wiki-service: Wiki pages per workspace — tree, flat list, search. */
export const wikiService: ServiceDefinition<WikiOps> = {
  service: 'wiki',
  catalog: wikiOps,
  migrations: WIKI_MIGRATIONS,
  createHandlers: ({ replica }) => ({
    ping: createPingHandler('wiki-service', replica),
  }),
};
