import { wikiOps, type WikiOps } from '@dagu-mcp/contracts';
import { createPingHandler, onReads, type ServiceDefinition } from '@dagu-mcp/service-kit';
import { WIKI_MIGRATIONS } from './db/migrations';
import { createWikiDeleteHandler } from './handlers/wiki-delete.handler';
import { createWikiGetHandler } from './handlers/wiki-get.handler';
import { createWikiListHandler } from './handlers/wiki-list.handler';
import { createWikiPutHandler } from './handlers/wiki-put.handler';
import { createWikiSearchHandler } from './handlers/wiki-search.handler';
import { createWikiRenameHandler } from './handlers/wiki-rename.handler';
import { createWikiCheckHandler } from './handlers/wiki-check.handler';

/**
 * wiki-service: Wiki pages per workspace — tree, flat list, page, search, writes.
 * The reads go to the replica when there is one and it may serve the caller.
 */
export const wikiService: ServiceDefinition<WikiOps> = {
  service: 'wiki',
  catalog: wikiOps,
  migrations: WIKI_MIGRATIONS,
  createHandlers: ({ replica, pool, reads }) => ({
    ping: createPingHandler('wiki-service', replica),
    'wiki.list': onReads(reads, pool, createWikiListHandler),
    'wiki.get': onReads(reads, pool, createWikiGetHandler),
    'wiki.search': onReads(reads, pool, createWikiSearchHandler),
    'wiki.put': createWikiPutHandler(pool),
    'wiki.delete': createWikiDeleteHandler(pool),
    'wiki.rename': createWikiRenameHandler(pool),
    'wiki.check': createWikiCheckHandler(pool),
  }),
};
