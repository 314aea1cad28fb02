import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Handler, Router, static as serveStatic } from 'express';
import { PROBLEM_CONTENT_TYPE, problemType } from '../common';

/** Where the console is mounted, on the api role's own origin. */
export const CONSOLE_PATH = '/console';

/**
 * The console may load only its own files and call only this origin: no inline script or style,
 * no CDN, no framing, no form posts elsewhere. Its code is built by Vite into separate files so
 * that this policy holds without a nonce.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** dist/console under the package root, from src/ (tests) and from dist/src/ (the service). */
export function consoleAssetsDir(from = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package root not found');
    dir = parent;
  }
  return join(dir, 'dist', 'console');
}

const headers: Handler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  next();
};

/**
 * The built console as static files. Hashed assets are cached for good; index.html never, so a
 * new build is picked up at once. Unbuilt, it answers a 503 problem that says how to build it.
 */
export function consoleAssets(dir = consoleAssetsDir()): Router {
  const router = Router();
  router.use(headers);
  if (!existsSync(join(dir, 'index.html'))) {
    router.use((_req, res) => {
      res
        .status(503)
        .type(PROBLEM_CONTENT_TYPE)
        .send(
          JSON.stringify({
            type: problemType('console-not-built'),
            title: 'Service Unavailable',
            status: 503,
            detail: 'the console is not built: run npm run build',
          }),
        );
    });
    return router;
  }
  router.use(
    serveStatic(dir, {
      index: 'index.html',
      fallthrough: true,
      setHeaders(res, path) {
        res.setHeader(
          'Cache-Control',
          path.includes(`${join('console', 'assets')}`)
            ? 'public, max-age=31536000, immutable'
            : 'no-cache',
        );
      },
    }),
  );
  return router;
}
