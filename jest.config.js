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
  testMatch: ['<rootDir>/{apps,packages,test}/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 30000,
};
