// Runs bench/bus-roundtrip.ts without a build: registers the SWC TypeScript
// hook of packages/bus (which also maps @dagu-mcp/* to sources), then loads it.
// Usage: node bench/bus-roundtrip.run.js [--n 5000] [--warmup 500] [--redis URL]
'use strict';
require('../packages/bus/test-fixtures/ts-register.js');
require('./bus-roundtrip.ts');
