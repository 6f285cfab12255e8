import { runServiceMain } from '@dagu-mcp/service-kit';
import { wikiService } from './wiki-service';

/** wiki-service process entry point: config from the environment, ops port 8083 by default. */
runServiceMain('wiki-service', wikiService, { schema: 'wiki_service', opsPort: 8083 });
