// The web console in real Chromium against a real `aos up` (server and
// worker as separate processes, SQLite) and the scripted model server: no
// mock API. Run with `npm run test:e2e` (scripts/console-test.sh builds the
// binary and sets AOS_BIN). Screenshots go to web/test-results/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import createClient from 'openapi-fetch';
import { deviceSocket } from './devicews.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const shots = join(here, '..', 'test-results');
const BIN = process.env.AOS_BIN;
const CHROMIUM = process.env.AOS_CHROMIUM || ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find(existsSync);
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const PASSWORD = 'correct horse battery staple';

const procs = [];
let tmp, base, direct, browser, hostileHits = 0, hostile, session, missionURL, aosEnv, engineMissionURL, agentURL;

// totp is RFC 6238 (SHA-1, 30 s, 6 digits), as an authenticator app computes it.
function totp(secretB32, at = Date.now()) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secretB32.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.alloc(Math.floor(bits.length / 8));
  for (let i = 0; i < key.length; i++) key[i] = parseInt(bits.slice(i * 8, i * 8 + 8), 2);
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(Math.floor(at / 1000 / 30)));
  const h = createHmac('sha1', key).update(msg).digest();
  const off = h[h.length - 1] & 15;
  return String((h.readUInt32BE(off) & 0x7fffffff) % 1000000).padStart(6, '0');
}

// startProc runs a command and resolves the first match of re in its output.
function startProc(args, env, re, what) {
  const p = spawn(BIN, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  procs.push(p);
  let seen = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no ${re} within 30 s:\n${seen}`)), 30000);
    const on = (b) => {
      seen += b.toString();
      const m = seen.match(re);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    p.stdout.on('data', on);
    p.stderr.on('data', on);
    p.on('exit', (code) => reject(new Error(`${what} exited ${code}:\n${seen}`)));
  });
}

async function waitFor(f, what, ms = 30000) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await f();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last: ${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// watch records CSP violations, console errors and page errors of a page.
async function watch(page, bad) {
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  page.on('console', (m) => {
    if (m.type() === 'error') bad.push(`${page.url()}: console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => bad.push(`${page.url()}: page error: ${e.message}`));
}

const AXE = readFileSync(join(here, '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

// axeCheck runs axe-core (WCAG 2 A and AA rules) in light and dark and
// returns the serious and critical violations.
async function axeCheck(page, name) {
  const found = [];
  for (const scheme of ['light', 'dark']) {
    await page.evaluate((s) => document.documentElement.setAttribute('data-theme', s), scheme);
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
    const vs = await page.evaluate(async () => {
      const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
    });
    found.push(...vs.map((v) => `${name} (${scheme}): ${v}`));
  }
  return found;
}

async function shoot(page, name) {
  for (const scheme of ['light', 'dark']) {
    await page.evaluate((s) => {
      document.documentElement.setAttribute('data-theme', s);
    }, scheme);
    await page.screenshot({ path: join(shots, `${name}-${scheme}.png`), fullPage: true });
  }
  await page.evaluate(() => {
    const t = localStorage.getItem('aos.theme') || 'light';
    if (t === 'system') document.documentElement.removeAttribute('data-theme');
    else document.documentElement.setAttribute('data-theme', t);
  });
}

before(async () => {
  assert.ok(BIN && existsSync(BIN), 'AOS_BIN must name a built aos binary (scripts/console-test.sh builds it)');
  assert.ok(CHROMIUM, 'Chromium not found: apt-get install chromium (or set AOS_CHROMIUM)');
  mkdirSync(shots, { recursive: true });
  tmp = mkdtempSync(join(tmpdir(), 'aos-console-'));
  hostile = createServer((_, res) => {
    hostileHits++;
    res.end('x');
  });
  await new Promise((r) => hostile.listen(0, '127.0.0.1', r));
  const script = readFileSync(join(here, 'console.script.yaml'), 'utf8').replace('HOSTILE_PORT', String(hostile.address().port));
  mkdirSync(join(tmp, 'scripts'));
  writeFileSync(join(tmp, 'scripts', 'console.yaml'), script);
  writeFileSync(join(tmp, 'scripts', 'question.yaml'), readFileSync(join(here, 'question.script.yaml')));
  writeFileSync(join(tmp, 'scripts', 'reconnect.yaml'), readFileSync(join(here, 'reconnect.script.yaml')));
  writeFileSync(join(tmp, 'scripts', 'denied.yaml'), readFileSync(join(here, 'denied.script.yaml')));
  writeFileSync(join(tmp, 'scripts', 'gate.yaml'), readFileSync(join(here, 'gate.script.yaml')));
  writeFileSync(join(tmp, 'scripts', 'bulk.yaml'), readFileSync(join(here, 'bulk.script.yaml')));
  const env = { PATH: process.env.PATH, HOME: join(tmp, 'home'), AOS_LOG_LEVEL: 'warn' };
  mkdirSync(env.HOME);
  const [modelURL] = await startProc(['dev', 'model-server', '--script', join(tmp, 'scripts')], env, /http:\/\/127\.0\.0\.1:\d+/, 'model server');
  const port = 20000 + Math.floor(Math.random() * 20000);
  // The browser uses http://localhost:PORT, the public origin, so that
  // passkeys work (browsers refuse an IP address as WebAuthn RP ID).
  base = `http://localhost:${port}`;
  direct = `http://127.0.0.1:${port}`;
  mkdirSync(join(tmp, 'root'));
  Object.assign(env, { AOS_PUBLIC_ORIGIN: base, AOS_DATA_DIR: join(tmp, 'data'), AOS_ADDR: `127.0.0.1:${port}`, AOS_WORKSPACE_ROOT: join(tmp, 'root'), ANTHROPIC_BASE_URL: modelURL });
  // aos up prints where to open the console, then the setup token.
  aosEnv = env;
  const up = await startProc(['up'], env, /open (http:\/\/\S+)\/setup\/ in a browser[\s\S]*setup token: (aos_setup_\S+)/, 'aos up');
  assert.equal(up[1], base, 'the printed console URL');
  process.env.SETUP_TOKEN = up[2];
  await waitFor(async () => (await fetch(direct + '/api/v1/health')).ok, 'the server');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
  for (const p of procs) p.kill('SIGINT');
  await Promise.all(procs.map((p) => (p.exitCode === null ? new Promise((r) => p.on('exit', r)) : null)));
  hostile?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});


// openPalette presses Ctrl+K until the command palette's field shows: a
// key pressed while the page is still wiring its handlers after a
// navigation is not an error of the palette (one CI run lost it), and a
// palette that never opens still fails after five presses.
async function openPalette(page) {
  for (let i = 0; ; i++) {
    await page.keyboard.press('Control+k');
    try {
      await page.locator('#palette-q').waitFor({ state: 'visible', timeout: 2000 });
      return;
    } catch (err) {
      if (i >= 4) throw err;
    }
  }
}

test('the owner sets up, logs in, runs a mission and approves it from Home on a phone', async () => {
  const bad = [];
  const ctx = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, hasTouch: true, isMobile: true });
  const page = await ctx.newPage();
  await watch(page, bad);

  // Headers on the document and on a hashed asset.
  const doc = await fetch(direct + '/home/');
  const csp = doc.headers.get('content-security-policy');
  for (const d of ["script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'", "object-src 'none'"]) assert.ok(csp.includes(d), `CSP lacks ${d}: ${csp}`);
  assert.ok(!/unsafe-(inline|eval)/.test(csp), csp);
  assert.equal(doc.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(doc.headers.get('referrer-policy'), 'no-referrer');
  assert.equal(doc.headers.get('cache-control'), 'no-cache');
  const asset = (await doc.text()).match(/\/assets\/[^"]+\.js/)[0];
  assert.match((await fetch(direct + asset)).headers.get('cache-control'), /immutable/);

  // First run: / sends to Home, which sends to setup.
  await page.goto(base + '/');
  await page.waitForURL('**/setup/');
  await shoot(page, 'setup-phone');
  await page.fill('#setup-token', process.env.SETUP_TOKEN);
  await page.click('button[type=submit]');
  const secret = (await page.textContent('[data-testid=totp-secret]')).trim();
  assert.match(secret, /^[A-Z2-7]+=*$/);
  assert.equal(await page.locator('svg.qr path').count(), 1, 'the QR code is drawn locally');
  await shoot(page, 'setup-totp-phone');
  assert.deepEqual(await axeCheck(page, 'setup-totp-phone'), []);
  await page.fill('#password', PASSWORD);
  await page.fill('#password2', PASSWORD);
  await page.fill('#totp', totp(secret));
  await page.click('button[type=submit]');
  await page.waitForURL('**/home/');
  await page.getByText('Nothing needs you right now.').waitFor();
  await page.getByTestId('health').getByText('database ok').waitFor();

  // Log out, and in again with password + TOTP. The code of the current
  // step was used by setup and is not accepted twice; the next step's
  // code is (±1 step).
  await page.click('text=Log out');
  await page.waitForURL('**/login/**');
  await shoot(page, 'login-phone');
  await page.fill('#password', PASSWORD);
  await page.fill('#totp', '000000');
  const mark = bad.length;
  await page.click('button[type=submit]');
  await page.getByRole('alert').waitFor();
  // The browser logs the refused login's 401 itself: expected, and only that.
  const refused = bad.splice(mark);
  assert.ok(refused.every((b) => /status of 401/.test(b)), refused.join('\n'));
  await page.fill('#totp', totp(secret, Date.now() + 30000));
  await page.click('button[type=submit]');
  await page.waitForURL('**/home/');

  // A project to work in (the projects page is not built yet: the API).
  const csrf = await page.evaluate(async () => (await (await fetch('/api/v1/auth/status')).json()).csrfToken);
  const pr = await page.request.post(base + '/api/v1/projects', { headers: { 'X-CSRF-Token': csrf, Origin: base }, data: { name: 'demo', path: 'demo', mode: 'init' } });
  assert.equal(pr.status(), 201, await pr.text());

  // Create a mission from the dialog.
  await page.click('nav >> text=Missions');
  await page.waitForURL('**/missions/');
  await page.click('text=New mission');
  await page.fill('#objective', 'Print the report');
  await page.fill('#criteria', 'the report is printed');
  // The model picker lists /models by provider, with prices.
  const models = await (await page.request.get(base + '/api/v1/models')).json();
  await page.locator('#model-pick optgroup option').first().waitFor({ state: 'attached' });
  for (const prov of new Set(models.map((m) => m.provider))) {
    assert.equal(await page.locator(`#model-pick optgroup[label="${prov}"] option`).count(), models.filter((m) => m.provider === prov).length, prov);
  }
  assert.match(await page.locator('#model-pick optgroup option').first().textContent(), /\$[\d.]+ in \/ \$[\d.]+ out per Mtok/);
  await page.selectOption('#model-pick', 'other');
  await page.fill('#model', 'script:console');
  await page.fill('#budget', '0.5');
  await page.check('input.check');
  await shoot(page, 'create-phone');
  await page.click('text=Start the mission');
  await page.waitForURL('**/mission/?id=*');
  missionURL = page.url();

  // The turn streams in, then the approval shows inline.
  await page.getByTestId('streaming').waitFor({ timeout: 30000 });
  await page.getByTestId('wait').waitFor({ timeout: 30000 });
  await shoot(page, 'mission-waiting-phone');

  // Approve from Home, at 390 px.
  await page.click('nav >> text=Home');
  await page.waitForURL('**/home/');
  const card = page.getByTestId('wait');
  await card.waitFor();
  assert.match(await card.textContent(), /shell/);
  await shoot(page, 'home-approval-phone');
  await page.screenshot({ path: join(shots, 'readme-home-phone.png') }); // the README's picture (viewport only)
  await card.getByRole('button', { name: 'Approve', exact: true }).click();
  await page.getByText('Nothing needs you right now.').waitFor();

  // The mission goes on and ends; the tool call shows, collapsed.
  await page.goto(missionURL);
  await waitFor(async () => (await page.getByTestId('mission-status').textContent()) === 'partial', 'the mission to end', 60000);
  const tool = page.getByTestId('tool-call').first();
  await tool.waitFor();
  assert.equal(await tool.locator('details').getAttribute('open'), null, 'tool calls start collapsed');
  await tool.locator('summary').click();
  const out = await tool.getByTestId('tool-output').textContent();

  // The hostile output is inert text: no element, no link, no request, no ANSI.
  assert.match(out, /<img src="http:\/\/127\.0\.0\.1:\d+\/pixel\.png"/);
  assert.match(out, /RED-ALERT/);
  assert.ok(!out.includes('\u001b') && !out.includes('[31m'), `ANSI left in ${JSON.stringify(out)}`);
  const tl = page.getByTestId('timeline');
  assert.equal(await tl.locator('img, script, iframe, object').count(), 0);
  assert.equal(await tl.locator('a[href^="javascript:"], a[href^="http"]').count(), 0, 'no link from tool output');
  assert.notEqual(await page.title(), '1');
  assert.equal(hostileHits, 0, 'the hostile image was fetched');
  assert.match(await tl.textContent(), /The report printed\. Finishing\./);
  assert.match(await tl.textContent(), /approved/);
  assert.match(await page.getByTestId('policy-decision').first().textContent(), /policy: allow shell \(owner\)/);
  // write_file's diff is rendered as a diff, its lines marked added.
  const wf = page.getByTestId('tool-call').filter({ hasText: 'write_file' });
  await wf.locator('summary').click();
  const added = wf.locator('pre.diff span.add');
  assert.deepEqual(await added.allTextContents(), ['+line one\n', '+line two\n']);
  await shoot(page, 'mission-done-phone');

  assert.deepEqual(bad, []);
  session = await ctx.storageState();
  await ctx.close();
});

test('a question is answered, a steering message sent, and the mission cancelled', async () => {
  assert.ok(session, 'needs the first test');
  const bad = [];
  const ctx = await browser.newContext({ viewport: PHONE, storageState: session });
  await ctx.grantPermissions(['notifications'], { origin: base });
  const page = await ctx.newPage();
  await watch(page, bad);
  // Record the notifications the console shows (the real constructor runs too).
  await page.addInitScript(() => {
    const Real = window.Notification;
    window.__shown = [];
    window.Notification = class extends Real {
      constructor(title, opts) {
        super(title, opts);
        window.__shown.push({ title, body: opts?.body });
      }
    };
  });
  await page.goto(base + '/missions/');
  await page.click('text=New mission');
  await page.fill('#objective', 'Pick a colour');
  await page.selectOption('#model-pick', 'other');
  await page.fill('#model', 'script:question');
  await page.click('text=Start the mission');
  await page.waitForURL('**/mission/?id=*');
  const q = page.getByTestId('wait');
  await q.waitFor({ timeout: 30000 });
  assert.match(await q.textContent(), /Which colour should the button be\?/);
  const shown = await waitFor(async () => (await page.evaluate(() => window.__shown)).find((n) => n.title === 'Agent OS: a question for you'), 'a notification');
  assert.equal(shown.body, 'Which colour should the button be?');
  await shoot(page, 'question-phone');
  await q.getByRole('button', { name: 'amber' }).click();
  const tl = page.getByTestId('timeline');
  await tl.getByText('you answered: amber').waitFor();
  await page.getByTestId('streaming').getByText('Amber it is.').waitFor({ timeout: 30000 });
  await page.fill('#steer', 'Please keep it short.');
  await page.click('button:has-text("Send")');
  await page.getByTestId('sent-message').getByText('Please keep it short.').waitFor();
  await page.click('text=Cancel the mission');
  await waitFor(async () => (await page.getByTestId('mission-status').textContent()) === 'cancelled', 'the mission to be cancelled', 30000);
  await page.getByRole('button', { name: 'Retry' }).waitFor();
  await shoot(page, 'mission-cancelled-phone');
  assert.deepEqual(bad, []);
  await ctx.close();
});

test('the timeline resumes from its cursor after the socket drops, with nothing missed or doubled', async () => {
  assert.ok(session, 'needs the first test');
  const bad = [];
  const ctx = await browser.newContext({ viewport: DESKTOP, storageState: session });
  const page = await ctx.newPage();
  await watch(page, bad);
  // Every events socket goes through the test, which can drop it (as a
  // server or a network would) and hold the reconnect back.
  const sockets = [];
  let release;
  const gate = new Promise((r) => (release = r));
  await page.routeWebSocket(/\/api\/v1\/events/, async (ws) => {
    sockets.push(ws);
    if (sockets.length > 1) await gate;
    ws.connectToServer();
  });
  await page.goto(base + '/home/');
  await page.locator("text=Today's spend").waitFor();
  const csrf = await page.evaluate(async () => (await (await fetch('/api/v1/auth/status')).json()).csrfToken);
  const created = await page.request.post(base + '/api/v1/missions', {
    headers: { 'X-CSRF-Token': csrf, Origin: base },
    data: { objective: 'Go on when told', model: 'script:reconnect', budgetUsd: 0.5, projectId: (await (await page.request.get(base + '/api/v1/projects')).json())[0].id },
  });
  assert.equal(created.status(), 201, await created.text());
  const m = await created.json();
  await page.click(`text=Go on when told`);
  await page.waitForURL('**/mission/?id=*');
  const q = page.getByTestId('wait');
  await q.waitFor({ timeout: 30000 });
  assert.equal(sockets.length, 1);

  // Drop the socket; while the console is cut off, the owner answers from
  // elsewhere (the API) and the mission runs to its end.
  await sockets[0].close({ code: 1011, reason: 'test drops the socket' });
  await waitFor(() => sockets.length === 2, 'the console to reconnect');
  const w = await (await page.request.get(base + `/api/v1/waits?status=pending&missionId=${m.id}`)).json();
  const res = await page.request.post(base + `/api/v1/waits/${w[0].id}/resolve`, { headers: { 'X-CSRF-Token': csrf, Origin: base }, data: { answer: 'yes' } });
  assert.equal(res.status(), 200, await res.text());
  await waitFor(async () => (await (await page.request.get(base + `/api/v1/missions/${m.id}`)).json()).status === 'partial', 'the mission to end');
  release();

  // The replay brings everything that happened, once.
  await waitFor(async () => (await page.getByTestId('mission-status').textContent()) === 'partial', 'the page to catch up', 15000);
  const tl = page.getByTestId('timeline');
  await tl.getByText('Going on, as you said.').waitFor();
  assert.equal(await tl.getByText('you answered: yes').count(), 1);
  assert.equal(await tl.getByText('First I need to know something.').count(), 1);
  assert.equal(await tl.getByText('Going on, as you said.').count(), 1);
  assert.equal(await page.getByTestId('wait').count(), 0);
  const steps = await (await page.request.get(base + `/api/v1/runs/${m.rootRunId}/steps`)).json();
  assert.equal(await page.getByTestId('turn').count(), steps.filter((s) => s.kind === 'model_call').length);
  assert.match(sockets[1].url(), /[?&]cursor=\d+/, 'the reconnect resumes from a cursor');
  assert.deepEqual(bad, []);
  await ctx.close();
});

test('spend shows the numbers of the API; settings, policy rules and projects are edited from the console', async () => {
  assert.ok(session, 'needs the first test');
  const bad = [];
  const ctx = await browser.newContext({ viewport: PHONE, storageState: session });
  const page = await ctx.newPage();
  await watch(page, bad);
  const usd = (v) => (v !== 0 && Math.abs(v) < 0.01 ? '$' + v.toFixed(4) : '$' + v.toFixed(2));

  // Settings: a daily cap, then Home and Spend show it.
  await page.goto(base + '/settings/');
  await page.fill('#cap', '7.5');
  await page.click('text=Save');
  await page.getByText('Saved.').waitFor();
  const api = async (path) => (await page.request.get(base + '/api/v1' + path)).json();
  assert.equal((await api('/settings')).dailyBudgetUsd, 7.5);
  await page.goto(base + '/spend/');
  const sp = await api('/spend');
  assert.equal(await page.getByTestId('spend-today').textContent(), usd(sp.todayUsd));
  await page.getByText(`of ${usd(sp.capUsd)} daily cap`).waitFor();
  assert.equal(sp.capUsd, 7.5);
  assert.equal(await page.locator('[data-testid=spend-days] tbody tr').count(), sp.days.length);
  for (const [i, d] of sp.days.entries()) {
    assert.equal(await page.locator('[data-testid=spend-days] tbody tr').nth(i).locator('td').nth(1).textContent(), usd(d.usd), d.day);
  }
  await shoot(page, 'spend-phone');
  await page.goto(base + '/home/');
  await page.getByText('of $7.50 daily cap').waitFor();

  // Policy: add a rule, see it in the API, delete it.
  await page.goto(base + '/policy/');
  await page.selectOption('#rdecision', 'deny');
  await page.fill('#rtool', 'shell');
  await page.fill('#rprefix', 'rm -rf');
  await page.click('text=Add the rule');
  await page.getByTestId('rules').getByText('shell rm -rf…').waitFor();
  const rules = await api('/policy/rules');
  assert.equal(rules.length, 1);
  assert.deepEqual([rules[0].decision, rules[0].tool, rules[0].commandPrefix], ['deny', 'shell', 'rm -rf']);
  await shoot(page, 'policy-phone');

  // The rule at work: the denied call has no step, and the ended
  // mission's timeline shows it "not executed" with the policy decision.
  const csrf = await page.evaluate(async () => (await (await fetch('/api/v1/auth/status')).json()).csrfToken);
  const projectId = (await api('/projects'))[0].id;
  const cr = await page.request.post(base + '/api/v1/missions', { headers: { 'X-CSRF-Token': csrf, Origin: base }, data: { objective: 'Clean up', criteria: ['the build directory is gone'], model: 'script:denied', budgetUsd: 0.5, projectId } });
  assert.equal(cr.status(), 201, await cr.text());
  const dm = await cr.json();
  await page.goto(base + `/mission/?id=${dm.id}`);
  // The server first (its answer says where a slow end stands), then the
  // page (a page behind the API is the console's own fault).
  let apiStatus, pageStatus;
  try {
    await waitFor(async () => (apiStatus = (await (await page.request.get(base + `/api/v1/missions/${dm.id}`)).json()).status) === 'blocked', 'the denied mission to end (API)');
    await waitFor(async () => (pageStatus = await page.getByTestId('mission-status').textContent()) === 'blocked', 'the page to show it blocked', 15000);
  } catch (e) {
    throw new Error(`${e.message}; API status ${apiStatus}, page status ${pageStatus}`);
  }
  await page.getByTestId('not-executed').getByText('not executed: shell rm -rf build').waitFor();
  assert.match(await page.getByTestId('policy-decision').first().textContent(), /policy: deny shell \(rule\)/);
  assert.equal(await page.getByTestId('tool-call').count(), 0);
  await shoot(page, 'mission-denied-phone');

  await page.goto(base + '/policy/');
  await page.getByRole('button', { name: /Delete the rule deny shell/ }).click();
  await page.getByText('No rules: the defaults by risk apply.').waitFor();
  assert.equal((await api('/policy/rules')).length, 0);

  // Projects: add one with git init.
  await page.goto(base + '/projects/');
  await page.fill('#pname', 'second');
  await page.fill('#ppath', 'second');
  await page.click('text=Add the project');
  await page.getByTestId('projects').getByText('second', { exact: true }).waitFor();
  assert.ok((await api('/projects')).some((p) => p.name === 'second' && p.mode === 'init'));
  assert.ok(existsSync(join(tmp, 'root', 'second', '.git')), 'git init ran');

  // Settings back to no cap, for the other tests.
  await page.goto(base + '/settings/');
  await page.fill('#cap', '0');
  await page.click('text=Save');
  await page.getByText('Saved.').waitFor();
  assert.deepEqual(bad, []);
  await ctx.close();
});

test('a passkey added in settings logs the owner in; an API token is created and revoked', async () => {
  assert.ok(session, 'needs the first test');
  const bad = [];
  const ctx = await browser.newContext({ viewport: PHONE, storageState: session });
  const page = await ctx.newPage();
  await watch(page, bad);
  // A virtual authenticator with user verification, as a phone's would be.
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await page.goto(base + '/settings/');
  await page.fill('#pkname', 'test phone');
  await page.click('text=Add a passkey');
  await page.getByTestId('passkeys').getByText('test phone').waitFor();
  await shoot(page, 'settings-phone');

  // An API token: shown once, works with the API, then revoked.
  await page.fill('#tname', 'script');
  await page.click('text=Create a token');
  const tok = (await page.getByTestId('new-token').textContent()).trim();
  assert.match(tok, /^aos_/);
  const auth = { headers: { Authorization: 'Bearer ' + tok } };
  assert.equal((await fetch(direct + '/api/v1/missions', auth)).status, 200);
  await page.getByRole('button', { name: 'Revoke the token script' }).click();
  await waitFor(async () => (await fetch(direct + '/api/v1/missions', auth)).status === 401, 'the token to be revoked');

  // Log out; log in with the passkey alone.
  await page.click('text=Log out');
  await page.locator('#password').waitFor();
  await page.click('text=Log in with a passkey');
  await page.waitForURL('**/settings/'); // back where the owner was
  await page.locator('#cap').waitFor();
  session = await ctx.storageState(); // the old session was logged out
  assert.deepEqual(bad, []);
  await ctx.close();
});

const ENDED = new Set(['done', 'partial', 'blocked', 'failed', 'budget_exhausted', 'cancelled']);

// ownerAPI opens Home in a fresh context and returns the page, a call
// helper over the owner's session (with the CSRF token on mutations) and
// the first project's id.
async function ownerAPI(viewport = DESKTOP) {
  const bad = [];
  const ctx = await browser.newContext({ viewport, storageState: session });
  const page = await ctx.newPage();
  await watch(page, bad);
  await page.goto(base + '/home/');
  await page.locator("text=Today's spend").waitFor();
  const csrf = await page.evaluate(async () => (await (await fetch('/api/v1/auth/status')).json()).csrfToken);
  const call = async (method, path, data) => {
    const r = await page.request.fetch(base + '/api/v1' + path, { method, headers: { 'X-CSRF-Token': csrf, Origin: base }, data });
    assert.ok(r.ok(), `${method} ${path}: ${r.status()} ${await r.text()}`);
    return r.status() === 204 ? null : r.json();
  };
  const projectId = (await call('GET', '/projects'))[0].id;
  return { ctx, page, bad, call, projectId };
}

test('a mission of over 2,000 steps opens and scrolls smoothly: its timeline is windowed', async () => {
  assert.ok(session, 'needs the first test');
  const { ctx, page, bad, call, projectId } = await ownerAPI();
  const t0 = Date.now();
  const m = await call('POST', '/missions', { objective: 'Read the notes many times', model: 'script:bulk', budgetUsd: 20, maxTurns: 96, projectId });
  await waitFor(async () => {
    const st = (await call('GET', `/missions/${m.id}`)).status;
    if (st === 'waiting') {
      for (const w of await call('GET', `/waits?status=pending&missionId=${m.id}`)) await call('POST', `/waits/${w.id}/resolve`, { answer: 'Let it continue' });
    }
    return ENDED.has(st);
  }, 'the 2,000-step mission to end', 300000);
  const made = Date.now() - t0;
  let steps = 0;
  for (let after = -1; ; ) {
    const pg = await call('GET', `/runs/${m.rootRunId}/steps?after=${after}&limit=500`);
    steps += pg.length;
    if (pg.length < 500) break;
    after = pg[pg.length - 1].seq;
  }
  assert.ok(steps >= 2000, `the mission journaled ${steps} steps`);

  // Open it: time from navigation to the timeline's first render.
  await page.goto(base + `/mission/?id=${m.id}`);
  const tl = page.locator('[data-testid=timeline][data-rows]');
  await tl.locator(':scope > li:not(.vspacer)').first().waitFor({ timeout: 30000 });
  const firstRender = await page.evaluate(() => performance.now());
  const rows = Number(await tl.getAttribute('data-rows'));
  const inDom = await tl.locator(':scope > li').count();

  // Scroll it to the end, 600 px a step, two frames each; count long tasks.
  const perf = await page.evaluate(async () => {
    const long = [];
    const po = new PerformanceObserver((l) => long.push(...l.getEntries().map((e) => e.duration)));
    po.observe({ type: 'longtask', buffered: false });
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const times = [];
    let maxDom = 0;
    const start = performance.now();
    for (let y = 0; y < document.documentElement.scrollHeight - innerHeight; y += 600) {
      const t = performance.now();
      window.scrollTo(0, y);
      await frame();
      times.push(performance.now() - t);
      maxDom = Math.max(maxDom, document.querySelectorAll('[data-testid=timeline] > li').length);
    }
    window.scrollTo(0, document.documentElement.scrollHeight);
    await frame();
    await frame();
    po.disconnect();
    times.sort((a, b) => a - b);
    return {
      scrollSteps: times.length, scrollMs: Math.round(performance.now() - start), stepP50Ms: Math.round(times[times.length >> 1]),
      stepP95Ms: Math.round(times[Math.floor(times.length * 0.95)]), stepMaxMs: Math.round(times[times.length - 1]),
      longTasks: long.length, longestTaskMs: Math.round(Math.max(0, ...long)), maxRowsInDom: maxDom, heightPx: document.documentElement.scrollHeight,
    };
  });
  // At the end, the last row is there.
  const end = await page.evaluate(() => {
    const pos = [...document.querySelectorAll('[data-testid=timeline] > li[aria-posinset]')].map((l) => Number(l.getAttribute('aria-posinset')));
    return { scrollY: Math.round(scrollY), innerHeight, scrollHeight: document.documentElement.scrollHeight, firstPos: Math.min(...pos), lastPos: Math.max(...pos) };
  });
  const figures = { steps, rows, rowsInDomAtFirst: inDom, missionMadeMs: made, firstRenderMs: Math.round(firstRender), ...perf };
  writeFileSync(join(shots, 'timeline-2000.json'), JSON.stringify(figures, null, 2));
  console.log('timeline figures:', JSON.stringify(figures));
  assert.ok(rows >= 2000, `the timeline has ${rows} rows`);
  assert.ok(inDom < 200 && perf.maxRowsInDom < 200, `up to ${perf.maxRowsInDom} rows in the DOM of ${rows}: the list is not windowed`);
  assert.equal(end.lastPos, rows, `scrolled to the end, the last row is not rendered: ${JSON.stringify(end)}`);
  assert.deepEqual(await axeCheck(page, 'mission-2000'), []);
  assert.deepEqual(bad, []);
  await ctx.close();
});

test('live text never shows out of order, nor after the step that ends it (the delta gate)', async () => {
  assert.ok(session, 'needs the first test');
  const { ctx, page, bad, call, projectId } = await ownerAPI();
  // In the page: whenever the streaming item shows turn k's text, turn
  // k's durable item is not shown yet and turn k-1's tool call is.
  await page.addInitScript(() => {
    const g = (window.__gate = { violations: [], seen: [] });
    const check = () => {
      const s = document.querySelector('[data-testid=streaming]');
      const k = Number(s?.textContent.match(/\[t(\d)\]/)?.[1] ?? 0);
      if (!k) return;
      if (!g.seen.includes(k)) g.seen.push(k);
      if ([...document.querySelectorAll('[data-testid=turn]')].some((t) => t.textContent.includes(`[t${k}]`))) g.violations.push(`turn ${k} streams after its step ended`);
      const tools = document.querySelectorAll('[data-testid=tool-call]').length;
      if (tools < k - 1) g.violations.push(`turn ${k} streams before turn ${k - 1}'s tool call shows (${tools} shown)`);
    };
    new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
  });
  // Between server and page: persisted events come 400 ms late, live text
  // at once, and each turn's live text again right after the step that
  // ends it (a late path).
  let mid = '';
  const turnOfSeq = new Map();
  const deltas = new Map();
  await page.routeWebSocket(/\/api\/v1\/events/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((msg) => {
      let e;
      try {
        e = JSON.parse(msg);
      } catch {
        return ws.send(msg);
      }
      if (e.missionId !== mid) return ws.send(msg);
      if (e.kind === 'model.delta') {
        ws.send(msg);
        const t = e.payload?.turn;
        deltas.set(t, [...(deltas.get(t) ?? []), msg]);
        return;
      }
      setTimeout(() => {
        ws.send(msg);
        if (e.payload?.kind !== 'model_call') return;
        // A model call's step.started is live only: its seq is in the payload.
        if (e.kind === 'step.started') turnOfSeq.set(e.seq ?? e.payload.seq, e.payload.request?.turn);
        if (e.kind === 'step.completed') for (const d of deltas.get(turnOfSeq.get(e.seq)) ?? []) ws.send(d);
      }, 400);
    });
  });
  await page.reload();
  await page.locator("text=Today's spend").waitFor();
  const m = await call('POST', '/missions', { objective: 'Read the notes while I watch', model: 'script:gate', budgetUsd: 1, projectId });
  mid = m.id;
  gateMission = m;
  await page.goto(base + `/mission/?id=${m.id}`);
  await waitFor(async () => (await page.getByTestId('mission-status').textContent()) === 'partial', 'the mission to end', 60000);
  const tl = page.getByTestId('timeline');
  await page.getByTestId('turn').filter({ hasText: '[t3] Third turn' }).waitFor();
  const g = await page.evaluate(() => window.__gate);
  assert.deepEqual(g.violations, []);
  assert.ok(g.seen.length >= 2, `live text was seen for turns ${g.seen}: the test watched nothing`);
  for (const k of [1, 2, 3]) assert.equal(await tl.getByText(`[t${k}]`).count(), 1, `turn ${k} once`);
  assert.equal(await page.getByTestId('streaming').count(), 0);
  assert.deepEqual(bad, []);
  await ctx.close();
});
let gateMission;

test("a mission's runs show as a tree; choosing a run shows its timeline", async () => {
  assert.ok(session && gateMission, 'needs the earlier tests');
  const { ctx, page, bad, call, projectId } = await ownerAPI(PHONE);
  const m = await call('POST', '/missions', { objective: 'Read the notes for the tree', model: 'script:gate', budgetUsd: 1, projectId });
  await waitFor(async () => ENDED.has((await call('GET', `/missions/${m.id}`)).status), 'the mission to end', 60000);
  // No product path starts a child run yet (the kernel can): the test
  // hangs another mission's real root run under this one in the real
  // listing, so that the child's own timeline is real too.
  const child = await call('GET', `/runs/${gateMission.rootRunId}`);
  await page.route(`**/api/v1/missions/${m.id}/runs`, async (route) => {
    const resp = await route.fetch();
    const runs = await resp.json();
    await route.fulfill({ response: resp, json: [...runs, { ...child, parentRunId: m.rootRunId, createdAt: runs[0].createdAt + 1 }] });
  });
  await page.goto(base + `/mission/?id=${m.id}`);
  const tree = page.getByTestId('run-tree');
  await tree.waitFor();
  const runs = tree.getByTestId('run');
  assert.equal(await runs.count(), 2);
  assert.equal(await tree.locator('ul ul [data-testid=run]').count(), 1, 'the child run is nested under the root');
  assert.equal(await runs.first().getAttribute('aria-pressed'), 'true');
  await shoot(page, 'run-tree-phone');
  assert.deepEqual(await axeCheck(page, 'run-tree-phone'), []);
  await runs.nth(1).click();
  await page.getByRole('heading', { name: `Timeline of run ${child.id.slice(0, 8)}` }).waitFor();
  assert.equal(await runs.nth(1).getAttribute('aria-pressed'), 'true');
  await page.getByTestId('timeline').getByText('[t3] Third turn').waitFor();
  await runs.first().click();
  await page.getByRole('heading', { name: 'Timeline', exact: true }).waitFor();
  assert.deepEqual(bad, []);
  await ctx.close();
});

test("an external engine's work shows in the timeline, one text row per engine event", async () => {
  assert.ok(session, 'needs the first test');
  // A real command: engine (the Go test engine of internal/backend), self-
  // tested once as aos requires, run by the real worker in its sandbox.
  const engine = join(tmp, 'testengine');
  await new Promise((resolve, reject) => {
    const p = spawn('go', ['build', '-o', engine, './internal/backend/testdata/testengine'], { cwd: join(here, '..', '..'), stdio: 'inherit' });
    p.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`go build testengine: exit ${c}`))));
  });
  await new Promise((resolve, reject) => {
    let out = '';
    const p = spawn(BIN, ['engine', 'check', `command:${engine}`], { env: aosEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout.on('data', (b) => (out += b));
    p.stderr.on('data', (b) => (out += b));
    p.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`aos engine check: exit ${c}\n${out}`))));
  });
  const { ctx, page, bad, call, projectId } = await ownerAPI(PHONE);
  const m = await call('POST', '/missions', { objective: 'Write hello mode:edit', engine: `command:${engine}`, budgetUsd: 1, projectId });
  engineMissionURL = base + `/mission/?id=${m.id}`;
  await page.goto(engineMissionURL);
  const rows = page.getByTestId('timeline').getByTestId('engine-event');
  await rows.filter({ hasText: 'engine COMPLETED: did edit' }).waitFor({ timeout: 60000 });
  const started = rows.and(page.locator('[data-kind="engine.started"]'));
  assert.match(await started.innerText(), /^▶ engine command:\S*testengine on \S+ \(base [0-9a-f]{12}\)$/);
  assert.match(await rows.and(page.locator('[data-kind="engine.finished"]')).innerText(), /^◀ engine COMPLETED: did edit \(0 model calls, \$0\.0000\)$/);
  // The engine's own verification command is not on the owner's allowlist: a refused row.
  assert.match(await rows.and(page.locator('[data-kind="verify.command"]')).first().innerText(), /^✓\? \/bin\/sh check\.sh — refused: /);
  // Engine text stays text: every row is a span with no element inside it.
  assert.equal(await rows.locator('a, img, script, iframe, [onerror]').count(), 0);
  await shoot(page, 'engine-mission-phone');
  assert.deepEqual(await axeCheck(page, 'engine-mission-phone'), []);
  assert.deepEqual(bad, []);
  await ctx.close();
});

test("an external engine's live-only rows show in the mission page while it is open, as text, and are not persisted", async () => {
  assert.ok(engineMissionURL, 'needs the engine test (it builds and checks the engine)');
  const engine = join(tmp, 'testengine');
  const { ctx, page, bad, call, projectId } = await ownerAPI(PHONE);
  const m = await call('POST', '/missions', { objective: 'Read the notes mode:live', engine: `command:${engine}`, budgetUsd: 1, projectId });
  await page.goto(base + `/mission/?id=${m.id}`);
  const rows = page.getByTestId('timeline').getByTestId('engine-event');
  const live = rows.and(page.locator('[data-kind="engine.event"]'));
  // The engine repeats one event of each kind every 500 ms until the test
  // says it has seen them: each kind's row, as the CLI's watch prints it.
  const tool = live.filter({ hasText: /^→ command:\S*testengine grep TODO \d+ \(exit 1\)$/ }).first();
  const change = live.filter({ hasText: /^✎ command:\S*testengine notes\.txt$/ }).first();
  const text = live.filter({ hasText: /^command:\S*testengine: <b>reading<\/b> the notes, pass \d+$/ }).first();
  for (const r of [tool, change, text]) await r.waitFor({ timeout: 60000 });
  // The model-written markup stays text: no element inside any row.
  assert.equal(await rows.locator('span *').count(), 0, 'an engine row holds no element');
  await shoot(page, 'engine-live-phone');
  assert.deepEqual(await axeCheck(page, 'engine-live-phone'), []);
  // Tell the engine: it finishes.
  const marker = await waitFor(() => readdirSync(tmp, { recursive: true }).find((f) => f.endsWith('/.engine-live')), 'the live engine worktree');
  writeFileSync(join(tmp, dirname(marker), '.host-seen'), '');
  await rows.filter({ hasText: 'engine COMPLETED: did live' }).waitFor({ timeout: 60000 });
  // Live-only rows are not journaled: a reload shows the persisted rows only.
  await page.reload();
  await rows.filter({ hasText: 'engine COMPLETED: did live' }).waitFor();
  assert.equal(await live.count(), 0, 'live-only rows are gone after a reload');
  await rows.and(page.locator('[data-kind="engine.started"]')).waitFor();
  assert.deepEqual(bad, []);
  await ctx.close();
});

test('the store prepares an agent (a retried submit keeps its key), the agent takes a task, and a device is paired and revoked', async (t) => {
  assert.ok(session, 'needs the first test');
  const { ctx, page, bad, call } = await ownerAPI(PHONE);
  await page.goto(base + '/store/');
  const pkg = page.locator('[data-testid=package][data-package="aos/go-service"]');
  await pkg.waitFor();
  assert.match(await pkg.innerText(), /official/);
  assert.match(await pkg.getByTestId('package-state').innerText(), /readiness/);
  await pkg.getByRole('button', { name: 'Inspect' }).click();
  await pkg.getByTestId('inspect').waitFor();
  // The first submit reaches the server, but its answer is lost on the
  // way back: the retry must send the same key and get the same operation.
  const keys = [];
  let lost = false;
  await page.route('**/api/v1/agents/prepare', async (route) => {
    keys.push(JSON.parse(route.request().postData()).idempotencyKey);
    if (!lost) {
      lost = true;
      await route.fetch();
      return route.abort('connectionreset');
    }
    return route.continue();
  });
  // A default model with no provider key for it: the agent's builtin
  // engine cannot start yet, so the preparation needs the owner.
  const before = await call('GET', '/settings');
  await call('PUT', '/settings', { defaultModel: 'gpt-5' });
  await pkg.getByLabel('New workspace name (optional)').fill('agent-one');
  await pkg.getByRole('button', { name: 'Prepare an agent' }).click();
  await pkg.getByRole('alert').waitFor();
  await pkg.getByRole('button', { name: 'Prepare an agent' }).click();
  const op = pkg.getByTestId('operation');
  await op.waitFor();
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1], 'a retry of one intent sends the same idempotency key');
  assert.match(keys[0], /^console-[0-9a-f]{32}$/);
  await op.and(page.locator('[data-state=needs_user_action]')).waitFor({ timeout: 60000 });
  assert.equal((await call('GET', '/agents')).length, 1, 'one agent for the two submits');
  t.diagnostic((await op.innerText()).replace(/\s+/g, ' '));
  assert.match(await op.innerText(), /ENGINE_ACTION_REQUIRED: engine builtin cannot start/);
  assert.match(await op.getByTestId('guidance').innerText(), /make the agent's engine usable/);
  await shoot(page, 'store-needs-action-phone');
  assert.deepEqual(await axeCheck(page, 'store-needs-action-phone'), []);
  // The owner sets a default model: the page's next poll makes the same operation ready.
  await call('PUT', '/settings', { defaultModel: 'script:question' });
  await op.and(page.locator('[data-state=ready]')).waitFor({ timeout: 30000 });
  if (before.defaultModel) await call('PUT', '/settings', { defaultModel: before.defaultModel });
  await op.getByTestId('agent-link').click();
  // The agent: its details, and a task sent to it.
  const agent = page.getByTestId('agent');
  await agent.waitFor();
  agentURL = page.url();
  assert.match(await agent.innerText(), /agent-one/);
  await agent.getByLabel('Task for this agent').fill('Write the notes');
  await agent.getByRole('button', { name: 'Send the task' }).click();
  const receipt = agent.getByTestId('receipt');
  await receipt.waitFor();
  const missions = await call('GET', '/missions');
  const sent = missions.find((m) => /Write the notes/.test(m.title ?? ''));
  assert.ok(sent, 'the task became a mission');
  await receipt.getByTestId('receipt-mission').click();
  await page.getByTestId('mission-status').waitFor();
  assert.equal(page.url(), base + `/mission/?id=${sent.id}`);
  // The task's mission (script:question) would wait for an answer: cancel it, so the inbox stays empty.
  await call('POST', `/missions/${sent.id}/cancel`);
  await waitFor(async () => ENDED.has((await call('GET', `/missions/${sent.id}`)).status), 'the task mission to end');
  // Devices: pair (the code, the URL, its QR code), exchange the code as a
  // device would, then revoke after the confirmation.
  await page.goto(base + '/devices/');
  await page.getByLabel('Device name').fill('robot <b>one</b>');
  await page.getByRole('button', { name: 'Make a pairing code' }).click();
  const code = await page.getByTestId('pairing-code').innerText();
  assert.match(code, /^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
  assert.match(await page.getByTestId('pairing-url').innerText(), /^aos:\/\/pair\?/);
  await page.getByRole('img', { name: 'The pairing URL as a QR code' }).waitFor();
  await shoot(page, 'devices-pairing-phone');
  assert.deepEqual(await axeCheck(page, 'devices-pairing-phone'), []);
  const ex = await fetch(direct + '/api/v1/device/pair', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code }) });
  assert.equal(ex.status, 201, await ex.text());
  await page.reload();
  const dev = page.getByTestId('device').filter({ hasText: 'robot <b>one</b>' });
  await dev.waitFor();
  assert.equal(await page.getByTestId('devices').locator('b').count(), 0, 'a device name stays text');
  await dev.getByRole('button', { name: 'Revoke…' }).click();
  await dev.getByRole('button', { name: 'Keep it' }).click();
  assert.ok(!(await call('GET', '/devices')).some((d) => d.revokedAt), 'Keep it revokes nothing');
  await dev.getByRole('button', { name: 'Revoke…' }).click();
  await dev.getByRole('button', { name: 'Revoke robot <b>one</b>' }).click();
  await dev.getByText('revoked').waitFor();
  assert.ok((await call('GET', '/devices')).every((d) => d.revokedAt), 'the device is revoked');
  assert.deepEqual(bad.filter((b) => !/ERR_CONNECTION_RESET|net::ERR/.test(b)), []);
  await ctx.close();
});

test("a device's preparation is revealed in the owner's console, which acknowledges it once and creates nothing", async () => {
  assert.ok(session, 'needs the first test');
  const { ctx, page, bad, call } = await ownerAPI(DESKTOP);
  // A paired device (the pairing code exchanged as a device would).
  const { code } = await call('POST', '/devices/pairings', { name: 'reveal phone' });
  const ex = await fetch(direct + '/api/v1/device/pair', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code }) });
  const exBody = await ex.text();
  assert.equal(ex.status, 201, exBody);
  const { token } = JSON.parse(exBody);
  const dev = await deviceSocket(direct, token);
  try {
    const hello = await dev.call({ type: 'hello', proto: 1, capabilities: ['store.list', 'store.inspect', 'agent.prepare', 'operation.get'] });
    assert.equal(hello.type, 'hello_result', JSON.stringify(hello));
    const missionsBefore = (await call('GET', '/missions')).length;
    const prep = { type: 'agent.prepare', machineId: hello.machineId, packageId: 'aos/docs-writer', idempotencyKey: 'reveal-1', workspace: { kind: 'new', name: 'revealed-one' } };
    const res = await dev.call(prep);
    assert.equal(res.status, 'accepted', JSON.stringify(res));
    const opId = res.operation.operationId;
    // The console, open on Home, shows the agent while the device polls.
    const notice = page.getByTestId('reveal').filter({ hasText: 'revealed-one' });
    try {
      await notice.waitFor({ timeout: 30000 });
    } catch (err) {
      const o = await dev.call({ type: 'operation.get', operationId: opId });
      throw new Error(`${err.message}\noperation: ${JSON.stringify(o)}\npending: ${JSON.stringify(await call('GET', '/agents/reveals'))}\npage: ${await page.innerText('body')}`);
    }
    const op = await waitFor(async () => {
      const o = (await dev.call({ type: 'operation.get', operationId: opId })).operation;
      return o.agentId ? o : null;
    }, 'the operation to record its agent');
    assert.equal(await notice.getAttribute('data-agent'), op.agentId);
    // The acknowledgement lands after it was shown: nothing is pending any more.
    await waitFor(async () => !(await call('GET', '/agents/reveals')).some((r) => r.operationId === opId), 'the acknowledgement');
    assert.deepEqual(await axeCheck(page, 'reveal-desktop'), []);
    await shoot(page, 'reveal-desktop');
    // The repeated operation id (the device's retry) answers the same
    // operation; a reloaded console does not show the agent again.
    const dup = await dev.call(prep);
    assert.equal(dup.status, 'duplicate');
    assert.equal(dup.operation.operationId, opId);
    await page.reload();
    await page.waitForResponse((r) => r.url().endsWith('/api/v1/agents/reveals') && r.ok());
    await page.waitForResponse((r) => r.url().endsWith('/api/v1/agents/reveals') && r.ok());
    assert.equal(await page.getByTestId('reveal').count(), 0, 'an acknowledged reveal is not shown again');
    // Revealing created nothing: one agent for the workspace, no mission.
    assert.equal((await call('GET', '/agents')).filter((a) => /\/revealed-one$/.test(a.workspace ?? '')).length, 1);
    assert.equal((await call('GET', '/missions')).length, missionsBefore, 'no mission was created');
    // The notice's link opens the agent's page.
    await dev.call({ type: 'agent.prepare', machineId: hello.machineId, packageId: 'aos/docs-writer', idempotencyKey: 'reveal-2', workspace: { kind: 'new', name: 'revealed-two' } });
    const second = page.getByTestId('reveal').filter({ hasText: 'revealed-two' });
    await second.waitFor({ timeout: 30000 });
    await second.getByTestId('reveal-link').click();
    await page.getByTestId('agent').filter({ hasText: 'revealed-two' }).waitFor();
    assert.match(page.url(), /\/agents\/\?id=ag_/);
  } finally {
    dev.close();
  }
  assert.deepEqual(bad, []);
  await ctx.close();
});

test('a refused prepare shows its code and guidance in the store', async () => {
  assert.ok(session, 'needs the first test');
  const { ctx, page, bad, call } = await ownerAPI(PHONE);
  // A reviewed community package whose setup fails: its first preparation
  // (through the API) leaves the installation broken.
  const dir = join(tmp, 'pkg-broken');
  mkdirSync(join(dir, 'template'), { recursive: true });
  const manifest = { packageId: 'test/broken', name: 'Broken setup', description: 'A package whose setup fails', category: 'test', engine: 'builtin',
    viewerPackageId: null, version: '1.0', viewer: false, template: 'template', instructions: 'AGENTS.md', criteria: ['the task is done'],
    policy: { network: 'none', boundaries: 'be careful' }, setup: 'setup.sh' };
  writeFileSync(join(dir, 'aos-package.json'), JSON.stringify(manifest));
  writeFileSync(join(dir, 'setup.sh'), 'echo "frobnicate: not found" >&2\nexit 3\n', { mode: 0o755 });
  writeFileSync(join(dir, 'AGENTS.md'), '# Broken\n');
  writeFileSync(join(dir, 'template', 'hello.txt'), 'hello\n');
  await call('POST', '/packages', { source: dir });
  await call('POST', '/packages/test/broken/review');
  const { machineId } = await call('GET', '/store/packages?limit=1');
  const first = await call('POST', '/agents/prepare', { machineId, packageId: 'test/broken', workspace: { kind: 'new', name: 'broken-one' }, idempotencyKey: 'broken-1' });
  await waitFor(async () => (await call('GET', `/operations/${first.operation.operationId}`)).error?.code === 'SETUP_FAILED', 'the setup to fail');
  // A new intent from the console is refused before any operation: the
  // page shows the seed's code, the message and the guidance.
  await page.goto(base + '/store/');
  const pkg = page.locator('[data-testid=package][data-package="test/broken"]');
  await pkg.getByRole('button', { name: 'Inspect' }).click();
  await pkg.getByRole('button', { name: 'Prepare an agent' }).click();
  const err = pkg.getByTestId('error');
  await err.waitFor();
  assert.match(await err.innerText(), /^PACKAGE_BROKEN: the installation of test\/broken is broken/);
  assert.match(await err.getByTestId('error-guidance').innerText(), /^What to do: repair it on this machine; aos never overwrites a broken install$/);
  assert.equal(await pkg.getByTestId('operation').count(), 0, 'no operation was reserved');
  await shoot(page, 'store-refused-phone');
  assert.deepEqual(await axeCheck(page, 'store-refused-phone'), []);
  // The browser logs the refused request's status itself: expected, and only that.
  assert.deepEqual(bad.filter((b) => !/status of 409/.test(b)), []);
  await ctx.close();
});

test('a third-party client driven by the spec reads the real API, and every answer type-checks against the generated types', async () => {
  assert.ok(session && gateMission, 'needs the earlier tests');
  // openapi-fetch, typed by web/src/schema.d.ts, over the owner's session.
  const sid = session.cookies.find((c) => c.name === 'aos_sid');
  assert.ok(sid, 'the session cookie');
  const client = createClient({ baseUrl: base, headers: { Cookie: `aos_sid=${sid.value}` } });
  const m = gateMission;
  const reads = [
    ['/api/v1/health', {}],
    ['/api/v1/auth/status', {}],
    ['/api/v1/missions', { query: { limit: 50 } }],
    ['/api/v1/missions/{id}', { path: { id: m.id } }],
    ['/api/v1/missions/{id}/runs', { path: { id: m.id } }],
    ['/api/v1/runs/{id}', { path: { id: m.rootRunId } }],
    ['/api/v1/runs/{id}/steps', { path: { id: m.rootRunId }, query: { after: -1, limit: 500 } }],
    ['/api/v1/runs/{id}/artifacts', { path: { id: m.rootRunId } }],
    ['/api/v1/waits', { query: { status: 'resolved' } }],
    ['/api/v1/policy/rules', {}],
    ['/api/v1/spend', {}],
    ['/api/v1/models', {}],
    ['/api/v1/settings', {}],
    ['/api/v1/projects', {}],
    ['/api/v1/notifications', { query: { limit: 20 } }],
    ['/api/v1/system/status', {}],
    ['/api/v1/system/audit', { query: { limit: 50 } }],
    ['/api/v1/tokens', {}],
    ['/api/v1/auth/webauthn/credentials', {}],
  ];
  // Each answer becomes a typed constant: tsc refuses a missing required
  // field, an unknown one, a wrong type or a value outside an enum.
  let ts = "import type { paths } from '../src/schema';\n";
  ts += "type OK<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer T } } } } } ? T : never;\n";
  for (const [i, [path, params]] of reads.entries()) {
    const { data, error, response } = await client.GET(path, { params });
    assert.equal(response.status, 200, `GET ${path}: ${JSON.stringify(error)}`);
    ts += `export const r${i}: OK<'${path}'> = ${JSON.stringify(data)};\n`;
  }
  const file = join(shots, 'real-responses.ts');
  writeFileSync(file, ts);
  const tsc = spawn(join(here, '..', 'node_modules', '.bin', 'tsc'),
    ['--ignoreConfig', '--noEmit', '--strict', '--skipLibCheck', '--target', 'ES2022', '--module', 'ESNext', '--moduleResolution', 'bundler', '--types', '', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  tsc.stdout.on('data', (b) => (out += b));
  tsc.stderr.on('data', (b) => (out += b));
  const code = await new Promise((r) => tsc.on('exit', r));
  assert.equal(code, 0, `the real responses do not type-check against web/src/schema.d.ts:\n${out.slice(0, 3000)}`);
});

test('every route is CSP-clean and axe-clean at phone and desktop width; the theme switch holds', async (t) => {
  assert.ok(session && missionURL, 'needs the first test');
  const a11y = [];
  for (const [label, viewport] of [['phone', PHONE], ['desktop', DESKTOP]]) {
    const bad = [];
    const ctx = await browser.newContext({ viewport, storageState: session });
    const page = await ctx.newPage();
    await watch(page, bad);
    for (const [name, path, ready] of [
      ['home', '/home/', 'text=Today\'s spend'],
      ['missions', '/missions/', 'text=Print the report'],
      ['mission', missionURL.slice(base.length), '[data-testid=tool-call]'],
      ['approvals', '/approvals/', 'text=Nothing is waiting for you.'],
      ['projects', '/projects/', '[data-testid=projects] >> text=demo'],
      ['policy', '/policy/', 'text=Add a rule'],
      ['spend', '/spend/', '[data-testid=spend-today]'],
      ['system', '/system/', '[data-testid=system-status]'],
      ['settings', '/settings/', '#cap'],
      ['store', '/store/', '[data-testid=package]'],
      ['devices', '/devices/', 'text=Pair a device'],
      ...(agentURL ? [['agent', agentURL.slice(base.length), '[data-testid=agent]']] : [['agents', '/agents/', 'h1']]),
      ...(engineMissionURL ? [['engine-mission', engineMissionURL.slice(base.length), '[data-testid=engine-event]']] : []),
    ]) {
      await page.goto(base + path);
      await page.locator(ready).first().waitFor();
      await shoot(page, `${name}-${label}`);
      a11y.push(...(await axeCheck(page, `${name}-${label}`)));
    }
    // A figure, not an assertion: Home interactive (navigation start to
    // its data drawn), median of 5 loads over loopback.
    const times = [];
    for (let i = 0; i < 5; i++) {
      await page.goto(base + '/home/');
      await page.locator("text=Today's spend").waitFor();
      await page.getByTestId('today-spend').waitFor();
      times.push(await page.evaluate(() => performance.now()));
    }
    times.sort((a, b) => a - b);
    t.diagnostic(`${label}: Home interactive, median of 5: ${times[2].toFixed(0)} ms (max ${times[4].toFixed(0)} ms)`);

    // The PWA: a manifest named Agent OS, and a service worker whose cache
    // holds the shell only, never an API answer.
    const manifest = await (await page.request.get(base + '/manifest.webmanifest')).json();
    assert.equal(manifest.name, 'Agent OS');
    const cached = await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
      const urls = [];
      for (const k of await caches.keys()) for (const r of await (await caches.open(k)).keys()) urls.push(new URL(r.url).pathname);
      return urls;
    });
    assert.ok(cached.includes('/home/'), `shell not cached: ${cached}`);
    assert.ok(cached.every((u) => !u.startsWith('/api/')), `API answers cached: ${cached}`);

    // The theme switch: dark sticks across a reload.
    await page.goto(base + '/home/');
    await page.selectOption('#theme', 'dark');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await page.reload();
    await page.locator('text=Today\'s spend').waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(12, 10, 9)');
    // Log out last, on desktop: the login page is checked too.
    if (label === 'desktop') {
      // The command palette: Ctrl+K, a few letters, Enter.
      await openPalette(page);
      await page.fill('#palette-q', 'sett');
      await page.keyboard.press('Enter');
      await page.waitForURL('**/settings/');
      await openPalette(page);
      await page.fill('#palette-q', 'print report');
      await page.keyboard.press('Enter');
      await page.waitForURL('**/mission/?id=*');
      await page.getByText('Print the report').first().waitFor();
      // The session ends elsewhere (logged out from another tab): the
      // next API call answers 401 and the console shows the login page,
      // keeping the page the owner was on.
      await page.goto(base + '/missions/');
      await page.locator('text=Print the report').first().waitFor();
      const csrf = await page.evaluate(async () => (await (await fetch('/api/v1/auth/status')).json()).csrfToken);
      assert.equal((await page.request.post(base + '/api/v1/auth/logout', { headers: { 'X-CSRF-Token': csrf, Origin: base } })).status(), 204);
      const mark = bad.length;
      await page.click('nav >> text=Approvals');
      await page.waitForURL('**/login/?next=%2Fapprovals%2F');
      await page.locator('#password').waitFor();
      const expired = bad.splice(mark);
      assert.ok(expired.every((b) => /status of 401/.test(b)), expired.join('\n'));
      a11y.push(...(await axeCheck(page, 'login-desktop')));
    }
    assert.deepEqual(bad, [], `${label}: CSP violations or console errors`);
    await ctx.close();
  }
  assert.deepEqual(a11y, [], 'serious or critical accessibility violations (axe-core)');
});
