// Bundles the run inspector (app/) into ONE self-contained HTML file, dist/run-inspector.html:
// the script (ext-apps SDK included) and the stylesheet are inlined, so the app makes no
// request of its own (MCP Apps: the host's sandbox and CSP apply). Run by `npm run build`.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = await build({
  entryPoints: [join(root, 'app', 'main.ts')],
  bundle: true,
  write: false,
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  legalComments: 'none',
});
// `</script` inside the inlined code would end the element early.
const js = bundle.outputFiles[0].text.replace(/<\/script/gi, '<\\/script');
const css = readFileSync(join(root, 'app', 'style.css'), 'utf8');
const html = readFileSync(join(root, 'app', 'index.html'), 'utf8')
  .replace('/*INLINE_CSS*/', () => css)
  .replace('/*INLINE_JS*/', () => js);
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(join(root, 'dist', 'run-inspector.html'), html);
console.log(`run-inspector.html: ${html.length} bytes`);
