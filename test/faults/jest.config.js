/**
 * The fault suite (issue 18; `npm run test:faults`): the scenarios of
 * test/faults (each on its own Redis, PostgreSQL and app processes), the
 * property tests at 10,000 cases each (PROPERTY_RUNS) and the 2-minute soak.
 * One worker: the scenarios time outages and recoveries, and `npm test`
 * runs beside them on the same two cores.
 */
const base = require('../../jest.config.js');

module.exports = {
  ...base,
  rootDir: '../..',
  testMatch: [
    '<rootDir>/test/faults/**/*.fault.test.ts',
    '<rootDir>/test/soak/**/*.soak.test.ts',
    '<rootDir>/{apps,packages,test}/**/*.property.test.ts',
  ],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  maxWorkers: 1,
  testTimeout: 300_000,
};
