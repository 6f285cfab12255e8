import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isConsolePath, loadWebConsole } from './web-console';

describe('the web console', () => {
  test.each([
    ['/', true],
    ['/dags/nightly', true],
    ['/runs/a/b', true],
    ['/api', false],
    ['/api/v1/dags', false],
    ['/mcp', false],
    ['/oauth/authorize', false],
    ['/.well-known/oauth-authorization-server', false],
    ['/signin', false],
    ['/console/index-abc.js', false],
    ['/apis-are-fine', true],
  ])('%s may get the page: %s', (path, expected) => {
    expect(isConsolePath(path)).toBe(expected);
  });

  test('loads index.html and puts its files and base under BASE_PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-'));
    writeFileSync(
      join(dir, 'index.html'),
      '<html><head><script type="module" src="/console/a.js"></script><link rel="stylesheet" href="/console/a.css"></head></html>',
    );
    const web = loadWebConsole(dir, '/dagu');
    expect(web?.html).toContain('src="/dagu/console/a.js"');
    expect(web?.html).toContain('href="/dagu/console/a.css"');
    expect(web?.html).toContain('<meta name="dagu-base" content="/dagu">');
    expect(web?.assetsDir).toBe(join(dir, 'console'));
  });

  test('no build: undefined (the gateway keeps its small HTML index)', () => {
    expect(loadWebConsole(mkdtempSync(join(tmpdir(), 'web-')), '')).toBeUndefined();
  });
});
