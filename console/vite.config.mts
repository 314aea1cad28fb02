import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web console: built into dist/console by `npm run build`, served by the api role at
 * /console. Everything it loads comes from that folder (no CDN): the server's
 * Content-Security-Policy allows nothing else.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or data: URLs for the strict CSP; every asset is a file of its own.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
});
