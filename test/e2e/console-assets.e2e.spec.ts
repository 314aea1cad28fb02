import express from 'express';
import request from 'supertest';
import { CONSOLE_CSP, consoleAssets } from '../../src/web-console';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The console as the api role serves it: the built files (npm run build) on the same origin,
 * each answer under the strict Content-Security-Policy, the entry page free of inline code.
 */
describe('console assets on the api role', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('serves index.html at /console/ under a CSP that allows only its own origin', async () => {
    const res = await t.http.get('/console/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    // Scripts and styles are files of our own: nothing inline, nothing from another host.
    expect(res.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(res.text).not.toMatch(/\sstyle=|<style/);
    expect(res.text).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('serves the hashed bundle for good and redirects /console to /console/', async () => {
    const index = await t.http.get('/console/');
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(index.text)?.[1];
    expect(script).toBeDefined();
    const asset = await t.http.get(script!);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-security-policy']).toBe(CONSOLE_CSP);

    const bare = await t.http.get('/console');
    expect(bare.status).toBe(301);
    expect(bare.headers.location).toBe('/console/');
  });

  it('answers a missing file as the API does (a 404 problem) and needs no credentials', async () => {
    const res = await t.http.get('/console/assets/nope.js');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('says how to build the console when its files are missing', async () => {
    const app = express().use('/console', consoleAssets('/nonexistent/console'));
    const res = await request(app).get('/console/');
    expect(res.status).toBe(503);
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(JSON.parse(res.text)).toMatchObject({
      status: 503,
      detail: 'the console is not built: run npm run build',
    });
  });
});
