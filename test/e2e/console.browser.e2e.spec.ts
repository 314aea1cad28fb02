import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { gate } from '../support/http-sink';
import { TEST_ADMIN_TOKEN } from '../support/test-app';

/** Debian's Chromium, installed by scripts/ensure-chromium.sh (npm test runs it first). */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots of each page, for a reviewer to look at (ignored by git). */
const SHOTS = join(__dirname, '../../test-results/console');
const WAIT_MS = 20_000;

/**
 * The console in a real browser against the whole app (api, poller, relay, worker) on a port:
 * what an operator does at 3 a.m., and that the strict CSP lets the console work (any
 * violation or uncaught page error fails the test).
 */
describe('web console in Chromium', () => {
  let w: ExecutionWorld;
  let url: string;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  const shot = (name: string) =>
    page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const text = (selector: string) => page.locator(selector).first().innerText({ timeout: WAIT_MS });
  const visible = (selector: string) =>
    page.locator(selector).first().waitFor({ state: 'visible', timeout: WAIT_MS });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    w = await startExecutionWorld('api,poller,relay,worker');
    await w.t.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(w.t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // Chromium reports CSP violations on the console ("Refused to load / execute …").
      if (/Refused to|Content Security Policy/i.test(message.text())) problems.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await w?.close();
  });

  it('refuses a wrong key with a readable message, then signs in', async () => {
    const response = await page.goto(`${url}/console/`);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await visible('input[name=token]');
    await shot('01-sign-in');
    await page.fill('input[name=token]', 'dl_0000000000000000_not-a-key');
    await page.click('button[type=submit]');
    expect(await text('[role=alert]')).toMatch(/^401 Unauthorized: /);
    await page.fill('input[name=token]', w.tenant.apiKey);
    await page.click('button[type=submit]');
    await visible('h2:text-is("Schedules")');
    expect(await page.evaluate('sessionStorage.getItem("dueline.console.token")')).toBe(
      w.tenant.apiKey,
    );
  });

  it('creates a cron schedule across a DST change, the preview marking the gap as you type', async () => {
    await w.createTarget();
    await page.click('a:text-is("New schedule")');
    await visible('[data-testid=schedule-form]');
    await page.fill('input[name=name]', 'berlin-sundays');
    await page.fill('input[name=timezone]', 'Europe/Berlin');
    // An invalid cron: the server's own validation shows as you type, beside the field.
    await page.fill('input[name=cron]', '61 2 * * *');
    expect(await text('.field-invalid .field-error')).toMatch(/minute|61|cron/i);
    // Sundays of March and October at 02:30: the last Sunday of March falls in the spring gap.
    await page.fill('input[name=cron]', '30 2 * 3,10 0');
    await visible('[data-dst=gap]');
    expect(await text('[data-dst=gap]')).toMatch(
      /^DST gap on \d{4}-03-\d\d: clocks go forward 60 min, 02:00 → 03:00 \(\+01:00 → \+02:00\)/,
    );
    expect(await text('[data-dst=gap]')).toContain('policy: skip');
    expect(await page.locator('.field-invalid').count()).toBe(0);
    await shot('02-schedule-form-preview');
    await page.click('button:text-is("Create schedule")');
    await visible('h2:text-is("berlin-sundays")');
    await visible('[data-testid=preview] [data-dst=gap]');
    await visible('[data-testid=upcoming-timeline] .dst-line-gap');
    await shot('03-schedule');
  });

  it('triggers a run and watches it turn SUCCEEDED, then pauses and resumes', async () => {
    await page.click('button:text-is("Trigger now")');
    await visible('[data-testid=runs] .badge-succeeded');
    await visible('.timeline .mark-succeeded');
    await visible('[data-testid=lag-chart] canvas');
    await page.click('button:text-is("Pause")');
    await visible('.definition .badge-paused');
    await page.click('button:text-is("Resume")');
    await visible('.definition .badge-active');
    await shot('04-schedule-with-runs');
  });

  it('shows a SKIPPED overlap with its reason, distinct from the others', async () => {
    const held = gate();
    w.sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    try {
      await page.click('button:text-is("Trigger now")');
      await visible('[data-testid=runs] .badge-running');
      await page.click('button:text-is("Trigger now")');
      await visible('[data-testid=runs] .badge-skipped');
      expect(
        await page.locator('[data-testid=runs] .badge-skipped').first().getAttribute('title'),
      ).toBe('overlap');
      expect(await text('[data-testid=runs] tr:has(.badge-skipped) td:nth-child(4)')).toBe(
        'overlap',
      );
      expect(await page.locator('.timeline .mark-skipped title').first().textContent()).toMatch(
        /SKIPPED · overlap/,
      );
      await shot('05-skipped-overlap');
    } finally {
      held.open();
      w.sink.behave(() => ({ status: 200, body: { ok: true } }));
    }
    await visible('[data-testid=runs] tr:first-child .badge-skipped');
  });

  it('shows a run with its attempts and fencing tokens', async () => {
    await page.click('[data-testid=runs] tr:has(.badge-succeeded) a');
    await visible('[data-testid=attempts]');
    const row = await text('[data-testid=attempts] tbody tr');
    // attempt 1, fencing token 1, its duration, outcome and the target's status
    expect(row).toMatch(/^1\s+1\s+.*\d+ ms\s+succeeded\s+200/);
    await shot('06-run');
  });

  it('lists targets without their secrets and shows an API error readably', async () => {
    // A Standard Webhooks secret: whsec_ and 32 bytes in base64.
    const SECRET = `whsec_${Buffer.from('console-secret-0123456789-abcdef').toString('base64')}`;
    await page.click('nav a:text-is("Targets")');
    await visible('h2:text-is("New target")');
    await page.fill('input[name=name]', 'signed');
    await page.fill('input[name=url]', w.sink.url('/signed'));
    await page.fill('input[name=signingSecret]', SECRET);
    await page.click('button:text-is("Create target")');
    await visible('[data-testid=targets] td:text-is("signed")');
    expect(await text('[data-testid=targets] tr:has(td:text-is("signed"))')).toMatch(/\bset$/);
    expect(await page.content()).not.toContain(SECRET);
    // A URL the API refuses: its problem document, readable, with the field named.
    await page.fill('input[name=name]', 'broken');
    await page.fill('input[name=url]', 'not a url');
    await page.click('button:text-is("Create target")');
    expect(await text('[role=alert]')).toMatch(/^400 /);
    expect(await text('[role=alert] li')).toMatch(/^url: /);
    await shot('07-targets');
  });

  it("shows the tenant's usage: quotas against use and its throttling", async () => {
    await page.click('nav a:text-is("Usage")');
    await visible('h2:text-is("Throttling")');
    const usage = (await w.auth(w.t.http.get('/usage'))).body;
    expect(await text('.definition')).toContain(
      `${usage.activeSchedules} of ${usage.quotas.maxActiveSchedules}`,
    );
    expect(await text('.definition >> nth=1')).toMatch(/Waiting for a concurrency permit\s+0/);
    await shot('08-usage');
  });

  it('gives the admin token the tenants view', async () => {
    await page.click('button:text-is("Sign out")');
    await page.check('input[name=role] >> nth=1');
    await page.fill('input[name=token]', TEST_ADMIN_TOKEN);
    await page.click('button[type=submit]');
    await visible('h2:text-is("New tenant")');
    await page.fill('input[name=tenantName]', 'globex');
    await page.click('button:text-is("Create tenant")');
    expect(await text('[data-testid=api-key]')).toMatch(/^dl_[a-f0-9]{16}_/);
    expect(await text('.definition')).toContain('globex');
    // The operator looks a tenant up by id: its quotas and its usage.
    await page.fill('input[name=tenantId]', w.tenant.id);
    await page.click('button:text-is("Show")');
    await visible('dt:text-is("Oldest waiting")');
    await shot('10-tenant-usage');
    expect(await text('.definition')).toContain(w.tenant.id);
    await shot('09-tenants');
    expect(problems).toEqual([]);
  });
});
