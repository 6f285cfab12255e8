import { defineConfig } from 'vite';

/**
 * The console builds to `dist/`: `index.html` and hashed files under `dist/console/`, which the
 * gateway serves from `WEB_DIST_DIR` (the gateway rewrites `/console/` under `BASE_PATH`).
 * One bundle, no code splitting: the first load is the whole app (budget in test/web).
 */
export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    assetsDir: 'console',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    modulePreload: { polyfill: false },
  },
});
