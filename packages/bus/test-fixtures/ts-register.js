/**
 * Lets a plain `node` child process (integration-test fixtures, the bus
 * benchmark) run this repo's TypeScript sources the way Jest does: `.ts` files
 * are compiled by SWC on require (the root devDependency @swc/core, same
 * options as jest.config.js) and `@dagu-mcp/<pkg>` resolves to
 * `packages/<pkg>/src/index.ts`, so nothing needs a build.
 *
 * Usage: `node -r ./packages/bus/test-fixtures/ts-register.js file.ts`
 * or `require()` it first. Packages that a caller's own folder cannot resolve
 * (e.g. `bullmq` from bench/) fall back to packages/bus's dependencies.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const busPackageJson = path.join(repoRoot, 'packages', 'bus', 'package.json');
const workspacePackage = /^@dagu-mcp\/([a-z-]+)$/;

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveWorkspace(request, parent, isMain, options) {
  const workspace = workspacePackage.exec(request);
  if (workspace) return path.join(repoRoot, 'packages', workspace[1], 'src', 'index.ts');
  try {
    return resolveFilename.call(this, request, parent, isMain, options);
  } catch (error) {
    if (error.code !== 'MODULE_NOT_FOUND' || request.startsWith('.') || path.isAbsolute(request)) throw error;
    return Module.createRequire(busPackageJson).resolve(request);
  }
};

Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, {
    filename,
    sourceMaps: 'inline',
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
