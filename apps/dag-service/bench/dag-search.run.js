// Runs bench/dag-search.bench.ts without a build: registers the repo's SWC
// TypeScript hook (packages/bus/test-fixtures/ts-register.js, which also maps
// @dagu-mcp/* to sources), then loads it. PostgreSQL must be up.
// Usage (from the repo root):
//   node apps/dag-service/bench/dag-search.run.js [--n 10000] [--iterations 200] [--db postgres://postgres@127.0.0.1:5432/test]
'use strict';
require('../../../packages/bus/test-fixtures/ts-register.js');
require('./dag-search.bench.ts');
