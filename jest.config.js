/**
 * One Jest config for the whole repo. Sources are compiled by SWC on the fly and
 * workspace packages resolve to their `src/`, so tests never need a build; the
 * end-to-end tier spawns the built apps (`dist/`), which `npm test` builds first.
 */
const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^@dagu-mcp/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts' },
  testMatch: ['<rootDir>/{apps,packages,examples,extensions,test}/**/*.test.ts'],
  // The fault suite and the soak run on their own (test/faults/jest.config.js, `npm run test:faults`).
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '<rootDir>/test/faults/', '<rootDir>/test/soak/'],
  testTimeout: 30000,
};
