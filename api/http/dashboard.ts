/**
 * The dashboard at /ui: the static files the UI build wrote (ui/build.mjs, run by `npm ci`), with
 * every other path under /ui answered by index.html so that the client's routes survive a reload.
 * The files are public (the API key is entered in the page); every request the page makes goes
 * through the API's usual auth. Assets carry a content hash in their names and are cached for good;
 * index.html is never cached, so a new build is picked up on the next load.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type Request, type Response } from 'express';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The configured folder, else ui/dist beside the sources (tsx) or beside dist/ (compiled). */
export function dashboardDir(configured?: string): string | null {
  const candidates = configured
    ? [configured]
    : [path.resolve(here, '../../ui/dist'), path.resolve(here, '../../../ui/dist')];
  return candidates.find((d) => existsSync(path.join(d, 'index.html'))) ?? null;
}

const SECURITY_HEADERS = {
  // Everything is bundled: the page may talk to its own origin only.
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

export function dashboard(dir: string | null): Router {
  const r = Router();
  // Express matches '/ui' and '/ui/' alike; the page's relative routes need the slash.
  r.use((req, res, next) => (req.path === '/ui' ? res.redirect(301, '/ui/') : next()));
  if (!dir) {
    r.use('/ui', (_req: Request, res: Response) => {
      res
        .status(503)
        .type('text/plain')
        .send('The dashboard is not built: run `npm run ui:build` (npm ci runs it).\n');
    });
    return r;
  }
  r.use('/ui', (_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  r.use(
    '/ui/assets',
    express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false }),
  );
  r.use('/ui/assets', (_req: Request, res: Response) => {
    res.status(404).type('text/plain').send('no such asset\n');
  });
  r.get('/ui/{*rest}', (_req, res) => {
    res.set('Cache-Control', 'no-cache');
    res.sendFile(path.join(dir, 'index.html'));
  });
  return r;
}
