import { wikiOps, type WikiOps } from '@dagu-mcp/contracts';
import { createPingHandler, type ServiceDefinition } from '@dagu-mcp/service-kit';
import { WIKI_MIGRATIONS } from './db/migrations';
import { createWikiDeleteHandler } from './handlers/wiki-delete.handler';
import { createWikiGetHandler } from './handlers/wiki-get.handler';
import { createWikiListHandler } from './handlers/wiki-list.handler';
import { createWikiPutHandler } from './handlers/wiki-put.handler';
import { createWikiSearchHandler } from './handlers/wiki-search.handler';
import { createWikiRenameHandler } from './handlers/wiki-rename.handler';
import { createWikiCheckHandler } from './handlers/wiki-check.handler';

/** wiki-service: Wiki pages per workspace — tree, flat list, page, search, writes. */
export const wikiService: ServiceDefinition<WikiOps> = {
  service: 'wiki',
  catalog: wikiOps,
  migrations: WIKI_MIGRATIONS,
  createHandlers: ({ replica, pool }) => ({
    ping: createPingHandler('wiki-service', replica),
    'wiki.list': createWikiListHandler(pool),
    'wiki.get': createWikiGetHandler(pool),
    'wiki.search': createWikiSearchHandler(pool),
    'wiki.put': createWikiPutHandler(pool),
    'wiki.delete': createWikiDeleteHandler(pool),
    'wiki.rename': createWikiRenameHandler(pool),
    'wiki.check': createWikiCheckHandler(pool),
  }),
};
