/**
 * No pnpm "Ignored build scripts" box on `npm start` (issue 53 item 6): every installed package
 * with an install script (`preinstall`, `install`, `postinstall`) is listed in
 * `pnpm-workspace.yaml`, either allowed (`onlyBuiltDependencies`) or deliberately not built
 * (`ignoredBuiltDependencies`). pnpm prints the box for any other.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** The names under a top-level list key of pnpm-workspace.yaml (`key:` then `  - name` lines). */
function listOf(yaml: string, key: string): string[] {
  const block = new RegExp(`^${key}:\\n((?:[ \\t]+-[^\\n]*\\n?)+)`, 'm').exec(yaml)?.[1] ?? '';
  return [...block.matchAll(/-\s*['"]?([^'"\n]+?)['"]?\s*$/gm)].map((m) => m[1] ?? '');
}

/** Names of the packages in node_modules/.pnpm that declare an install script. */
function packagesWithInstallScripts(): string[] {
  const store = join(ROOT, 'node_modules', '.pnpm');
  const found = new Set<string>();
  for (const entry of readdirSync(store)) {
    const modules = join(store, entry, 'node_modules');
    if (!existsSync(modules)) continue;
    for (const name of readdirSync(modules)) {
      const dirs = name.startsWith('@') ? readdirSync(join(modules, name)).map((n) => `${name}/${n}`) : [name];
      for (const pkg of dirs) {
        const file = join(modules, pkg, 'package.json');
        if (!existsSync(file)) continue;
        try {
          const manifest = JSON.parse(readFileSync(file, 'utf8')) as {
            name?: string;
            scripts?: Record<string, string>;
          };
          const scripts = manifest.scripts ?? {};
          if (['preinstall', 'install', 'postinstall'].some((s) => scripts[s] !== undefined) && manifest.name === pkg)
            found.add(pkg);
        } catch {
          // not a readable manifest (a symlink to a workspace package being built): not a dependency's
        }
      }
    }
  }
  return [...found].sort();
}

test('every dependency with an install script is either allowed or ignored in pnpm-workspace.yaml', () => {
  const yaml = readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8');
  const listed = new Set([...listOf(yaml, 'onlyBuiltDependencies'), ...listOf(yaml, 'ignoredBuiltDependencies')]);
  const unlisted = packagesWithInstallScripts().filter((name) => !listed.has(name) && !name.startsWith('@dagu-mcp/'));
  expect(unlisted).toEqual([]);
});
