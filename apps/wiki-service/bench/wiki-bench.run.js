// Runs bench/wiki-bench.ts without a build: registers the SWC TypeScript hook
// of packages/bus (which also maps @dagu-mcp/* to their sources), then loads it.
// Usage: node apps/wiki-service/bench/wiki-bench.run.js [--pages 10000] [--n 100] [--keep]
'use strict';
require('../../../packages/bus/test-fixtures/ts-register.js');
require('./wiki-bench.ts');
