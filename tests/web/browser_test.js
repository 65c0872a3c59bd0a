// Browser test of the issuescope search page, in Debian's headless Chromium driven by
// playwright-core. Run by tests/web/browser_e2e_test.cc against a real issuescope-search:
//
//   node browser_test.js --url http://127.0.0.1:PORT --phrase "marmoset quantile drift" \
//       --expect 6 --artifacts DIR
//
// It does what a person would: types a query, sees the results with highlights, clicks a
// facet value and sees the filtered count, checks the chart has bars, opens an issue and sees
// its comments and tags, and types a bad query and sees the server's error. Screenshots go to
// DIR; their paths are printed. Exit status 0 on success, 1 with a message on failure.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

function parseArgs(argv) {
  const args = { chromium: process.env.ISSUESCOPE_CHROMIUM || '/usr/bin/chromium' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    args[key] = argv[i + 1];
  }
  for (const k of ['url', 'phrase', 'expect', 'artifacts']) {
    if (!args[k]) throw new Error(`missing --${k}`);
  }
  args.expect = Number(args.expect);
  return args;
}

function check(cond, message) {
  if (!cond) throw new Error(message);
  console.log('ok - ' + message);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let chromium;
  try {
    ({ chromium } = require('playwright-core'));
  } catch (e) {
    throw new Error('playwright-core is not installed: run `npm ci` in tests/web (' + e.message + ')');
  }
  if (!fs.existsSync(args.chromium)) {
    throw new Error(`no Chromium at ${args.chromium}: install Debian's chromium and chromium-driver`);
  }
  fs.mkdirSync(args.artifacts, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'issuescope-chromium-'));
  // A persistent context on a fresh directory is Chromium's --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: args.chromium,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const problems = [];
  try {
    const page = context.pages()[0] || await context.newPage();
    page.setDefaultTimeout(20000);
    const origin = new URL(args.url).origin;
    // The page must load nothing from elsewhere and run without script errors.
    page.on('request', (req) => {
      const u = req.url();
      if (!u.startsWith(origin) && !u.startsWith('data:')) problems.push('external request ' + u);
    });
    page.on('pageerror', (err) => problems.push('page error: ' + err.message));
    page.on('console', (msg) => {
      // 4xx answers to the bad query are expected; anything else logged as an error is not.
      if (msg.type() === 'error' && !/status of 400/.test(msg.text())) {
        problems.push('console error: ' + msg.text());
      }
    });

    await page.goto(args.url + '/');
    check(await page.getByRole('heading', { name: 'issuescope' }).isVisible(), 'page shows its heading');
    const box = page.getByLabel('Query');

    // 1. Type a query; see N results with highlights.
    const query = `"${args.phrase}"`;
    await box.fill(query);
    await box.press('Enter');
    await page.waitForFunction((n) => document.querySelectorAll('#hits li.hit').length === n &&
      document.getElementById('total') && document.getElementById('total').textContent === String(n),
    args.expect);
    check(true, `query ${query} shows ${args.expect} results`);
    check(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('q') === query,
      'query is in the URL hash');
    const marks = await page.locator('#hits .snippet mark').allTextContents();
    check(marks.length >= args.expect, `snippets highlight the matches (${marks.length} <mark>)`);
    check(marks.every((m) => args.phrase.split(' ').some((w) => m.toLowerCase().includes(w))),
      'highlights are the query words');

    // 2. The chart of counts by theme per repository has bars.
    await page.waitForSelector('#chart svg rect.bar');
    const bars = await page.locator('#chart svg rect.bar').count();
    const barTotal = await page.$$eval('#chart svg rect.bar',
      (rs) => rs.reduce((s, r) => s + Number(r.getAttribute('data-count')), 0));
    check(bars > 0 && barTotal >= args.expect, `chart has ${bars} bars counting ${barTotal} issues`);
    await page.screenshot({ path: path.join(args.artifacts, 'search.png'), fullPage: true });

    // 3. Click a facet value; the result count becomes the facet's count.
    const facet = page.locator('#facet-list button[data-facet="repo"]').first();
    await facet.waitFor();
    const facetValue = await facet.getAttribute('data-value');
    const facetCount = Number((await facet.locator('.count').textContent()).replace(/,/g, ''));
    await facet.click();
    await page.waitForFunction((n) => {
      const t = document.getElementById('total');
      return t && t.textContent === String(n) && document.querySelectorAll('#hits li.hit').length === n;
    }, facetCount);
    check(await page.inputValue('#q') !== query, `facet repo=${facetValue} added to the query`);
    check(facetCount > 0 && facetCount <= args.expect, `facet filters to its count ${facetCount}`);
    check(await page.locator('#facet-list button[data-facet="repo"][aria-pressed="true"]').count() === 1,
      'clicked facet value shows as pressed');

    // 4. Open an issue that has comments; see its body, comments and tags.
    const hits = page.locator('#hits li.hit');
    let opened = false;
    for (let i = 0; i < await hits.count(); i++) {
      // The meta line's parts are separate spans ("updated 2020-07-02", "0 comments"); read the
      // count from its own span (the joined text would run the date into it).
      const parts = await hits.nth(i).locator('.meta span').allTextContents();
      const m = parts.map((t) => /^(\d+) comments$/.exec(t.trim())).find(Boolean);
      if (!m || Number(m[1]) === 0) continue;
      const title = await hits.nth(i).locator('a.hit-title').textContent();
      await hits.nth(i).locator('a.hit-title').click();
      await page.waitForSelector('#issue-view:not([hidden]) #comments li.comment');
      check((await page.locator('#issue-title').textContent()).startsWith(title), `issue "${title}" opens`);
      opened = true;
      break;
    }
    check(opened, 'a result with comments could be opened');
    const comments = await page.locator('#comments li.comment').count();
    check(comments > 0, `issue view shows ${comments} comments`);
    check((await page.locator('#issue-body').textContent()).length > 0, 'issue view shows the body');
    check(await page.getByRole('heading', { name: 'Tags' }).isVisible(), 'issue view shows the tags');
    check(await page.locator('#issue-tags dt').count() > 0, 'tags list has entries');
    check(await page.locator('#issue-evidence li').count() > 0, 'tag evidence is listed');
    await page.screenshot({ path: path.join(args.artifacts, 'issue.png'), fullPage: true });
    await page.locator('#back').click();
    await page.waitForSelector('#search-view:not([hidden]) #hits li.hit');
    check(true, 'back link returns to the results');

    // 5. A bad query shows the server's error.
    await box.fill('(crash');
    await box.press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor({ state: 'visible' });
    const message = await alert.textContent();
    check(/unbalanced parenthesis/.test(message) && /column 1/.test(message),
      `bad query shows the error: ${message.trim()}`);
    await page.screenshot({ path: path.join(args.artifacts, 'error.png'), fullPage: true });

    check(problems.length === 0, 'no external requests, script or console errors' +
      (problems.length ? ': ' + problems.join('; ') : ''));
    for (const name of ['search.png', 'issue.png', 'error.png']) {
      console.log('screenshot: ' + path.join(args.artifacts, name));
    }
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (err) => {
  console.error('FAIL: ' + (err && err.stack ? err.stack : err));
  process.exit(1);
});
