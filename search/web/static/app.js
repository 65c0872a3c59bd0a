// issuescope search page: vanilla JavaScript over the HTTP/JSON API of the search service
// (docs/WEB.md). State lives in the URL hash (#q=...&issue=...), so every view is a link.
// Everything shown is set with textContent / DOM nodes; the only HTML taken from the server is
// the snippet, which is re-sanitised to text and <mark> elements.
'use strict';

const FACETS = ['repo', 'label', 'state', 'kind', 'theme', 'llm', 'author', 'year'];
const FACET_TITLES = {
  repo: 'Repository', label: 'Label', state: 'State', kind: 'Kind', theme: 'Theme',
  llm: 'LLM-related', author: 'Author', year: 'Year created',
};
const PAGE_SIZE = 20;
const SVG_NS = 'http://www.w3.org/2000/svg';
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
  '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#8cd17d'];
const MAX_CHART_THEMES = 11;  // more themes are drawn together as "other"

const $ = (id) => document.getElementById(id);

// el builds an element: el('a', {href: '#'}, 'text', child, ...).
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v; else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// ---- URL state -------------------------------------------------------------------------------

function readHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  return { q: params.get('q') || '', issue: params.get('issue') || '' };
}

function hashFor(state) {
  const params = new URLSearchParams();
  params.set('q', state.q || '');
  if (state.issue) params.set('issue', state.issue);
  return '#' + params.toString();
}

function go(state) {
  const h = hashFor(state);
  if (location.hash === h) render(); else location.hash = h;
}

// ---- API -------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(code, message, status) { super(message); this.code = code; this.status = status; }
}

async function api(path) {
  let res;
  try {
    res = await fetch(path, { headers: { Accept: 'application/json' } });
  } catch (e) {
    throw new ApiError('UNAVAILABLE', 'cannot reach the search service: ' + e.message, 0);
  }
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok) {
    const code = body && body.code ? body.code : 'HTTP_' + res.status;
    const message = body && body.message ? body.message : res.statusText;
    throw new ApiError(code, message, res.status);
  }
  return body;
}

function qs(params) {
  return Object.entries(params).map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v))
    .join('&');
}

// ---- helpers ---------------------------------------------------------------------------------

const num = (v) => Number(v || 0);
const fmt = (n) => num(n).toLocaleString('en');
const day = (ts) => (ts ? String(ts).slice(0, 10) : '');
const stateName = (s) => String(s || '').replace(/^ISSUE_STATE_/, '').toLowerCase() || 'unknown';

function showError(err) {
  const box = $('error');
  if (!err) { box.hidden = true; box.textContent = ''; return; }
  box.hidden = false;
  box.textContent = (err.code === 'INVALID_ARGUMENT' ? 'Query error: ' : err.code + ': ') + err.message;
}

// quoteValue quotes a qualifier value when the query language needs it.
function quoteValue(v) {
  v = String(v);
  return /^[^\s"(),]+$/.test(v) ? v : '"' + v.replace(/"/g, '') + '"';
}

// qualifierFor is the query text that filters on one facet value.
function qualifierFor(facet, value) {
  switch (facet) {
    case 'state': {
      const s = stateName(value);
      return s === 'closed' || s === 'rejected' ? 'is:closed' : 'is:open';
    }
    case 'year': return `created:${value}-01-01..${value}-12-31`;
    case 'llm': return 'llm:' + String(value).toLowerCase();
    default: return facet + ':' + quoteValue(value);
  }
}

function queryHas(q, term) {
  return (' ' + q + ' ').includes(' ' + term + ' ');
}

function toggleTerm(q, term) {
  if (queryHas(q, term)) return (' ' + q + ' ').replace(' ' + term + ' ', ' ').trim();
  return (q.trim() + ' ' + term).trim();
}

// sanitizedSnippet keeps the text and <mark> elements of the server's escaped snippet.
function sanitizedSnippet(html) {
  const tpl = document.createElement('template');
  tpl.innerHTML = html || '';
  const out = el('p', { class: 'snippet' });
  const walk = (node, into) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) into.append(document.createTextNode(child.data));
      else if (child.nodeType === Node.ELEMENT_NODE && child.localName === 'mark') {
        const m = el('mark'); walk(child, m); into.append(m);
      } else if (child.nodeType === Node.ELEMENT_NODE) walk(child, into);
    }
  };
  walk(tpl.content, out);
  return out;
}

function issueRef(hit) {
  return `${hit.repoSlug}#${hit.number}`;
}

function issuePath(ref) {
  // "github:owner/name#12" -> /v1/issues/github/owner/name/12
  const m = /^([a-z]+):(.+)\/([^/]+)#(\d+)$/.exec(ref);
  if (!m) return null;
  return '/v1/issues/' + [m[1], ...m[2].split('/'), m[3], m[4]].map(encodeURIComponent).join('/');
}

function stateBadge(state, isPr) {
  const s = stateName(state);
  return el('span', { class: 'badge ' + s, title: 'state' }, (isPr ? 'PR ' : '') + s);
}

// goneBadge marks an issue the tracker reported deleted or transferred (is:deleted,
// is:transferred); null for a live one.
function goneBadge(issue) {
  if (issue.transferredTo) {
    return el('span', { class: 'badge gone', title: 'transferred' }, 'moved to ' + issue.transferredTo);
  }
  return issue.deleted ? el('span', { class: 'badge gone', title: 'deleted' }, 'deleted') : null;
}

function tagChips(tags) {
  const chips = [];
  if (!tags) return chips;
  if (tags.kind) chips.push(el('span', { class: 'chip tag', title: 'kind' }, tags.kind));
  if (tags.theme) chips.push(el('span', { class: 'chip tag', title: 'theme' }, tags.theme));
  for (const t of tags.secondaryThemes || []) {
    chips.push(el('span', { class: 'chip tag', title: 'secondary theme' }, t));
  }
  for (const t of tags.subthemes || []) {
    chips.push(el('span', { class: 'chip tag', title: 'sub-theme' }, t));
  }
  if (tags.llm) chips.push(el('span', { class: 'chip llm', title: 'LLM-related' }, 'llm'));
  return chips;
}

// ---- search view -----------------------------------------------------------------------------

let searchSeq = 0;
let nextToken = '';

async function runSearch(q) {
  const seq = ++searchSeq;
  $('hits').replaceChildren();
  $('more').hidden = true;
  $('summary').textContent = 'Searching…';
  const params = { q, page_size: PAGE_SIZE, facets: FACETS.join(','), facet_limit: 8 };
  let res;
  try {
    res = await api('/v1/search?' + qs(params));
  } catch (err) {
    if (seq !== searchSeq) return;
    showError(err);
    $('summary').textContent = 'No results.';
    $('facet-list').replaceChildren();
    $('facets-note').hidden = true;
    $('chart-figure').hidden = true;
    return;
  }
  if (seq !== searchSeq) return;
  showError(null);
  const total = num(res.total);
  const summary = $('summary');
  summary.replaceChildren(res.totalExact === false ? 'about ' : '',
    el('strong', { id: 'total' }, fmt(total)),
    total === 1 ? ' issue' : ' issues', q ? ' match ' : ' in the index',
    q ? el('code', {}, q) : '', ` (${(num(res.tookUs) / 1000).toFixed(1)} ms)`);
  renderFacets(res, q);
  appendHits(res.hits || [], q);
  nextToken = res.nextPageToken || '';
  $('more').hidden = !nextToken;
  renderChart(q, seq);
}

function appendHits(hits, q) {
  const list = $('hits');
  for (const hit of hits) {
    const ref = issueRef(hit);
    const labels = el('div', { class: 'chips' },
      ...(hit.labels || []).map((l) => el('span', { class: 'chip' }, l)), ...tagChips(hit.tags));
    const meta = el('p', { class: 'meta' },
      el('span', { class: 'ref' }, `${hit.repo}#${hit.number}`),
      stateBadge(hit.state, hit.isPullRequest),
      goneBadge(hit),
      hit.author ? el('span', {}, 'by ' + hit.author) : null,
      el('span', {}, 'opened ' + day(hit.createdAt)),
      el('span', {}, 'updated ' + day(hit.updatedAt)),
      el('span', {}, `${hit.commentCount || 0} comments`));
    list.append(el('li', { class: 'hit' },
      el('h3', {}, el('a', { href: hashFor({ q, issue: ref }), class: 'hit-title' }, hit.title || '(no title)')),
      meta, labels, sanitizedSnippet(hit.snippet)));
  }
}

async function loadMore() {
  const { q } = readHash();
  const seq = searchSeq;
  try {
    const res = await api('/v1/search?' + qs({ q, page_size: PAGE_SIZE, page_token: nextToken }));
    if (seq !== searchSeq) return;
    appendHits(res.hits || [], q);
    nextToken = res.nextPageToken || '';
    $('more').hidden = !nextToken;
  } catch (err) {
    showError(err);
  }
}

function renderFacets(res, q) {
  const list = $('facet-list');
  list.replaceChildren();
  for (const facet of res.facets || []) {
    const values = facet.values || [];
    if (!values.length) continue;
    const headingId = 'facet-' + facet.name;
    const ul = el('ul');
    for (const v of values) {
      const term = qualifierFor(facet.name, v.value);
      const label = v.value === '' ? '(none)' : v.value;
      const button = el('button', {
        type: 'button', 'data-facet': facet.name, 'data-value': v.value,
        'aria-pressed': queryHas(q, term) ? 'true' : 'false', title: term,
      }, el('span', { class: 'value' }, label), el('span', { class: 'count' }, fmt(v.count)));
      button.addEventListener('click', () => go({ q: toggleTerm(q, term) }));
      ul.append(el('li', {}, button));
    }
    const more = num(facet.distinctValues) - values.length;
    list.append(el('section', { class: 'facet', 'aria-labelledby': headingId },
      el('h3', { id: headingId }, FACET_TITLES[facet.name] || facet.name), ul,
      more > 0 ? el('p', { class: 'note' }, `and ${fmt(more)} more`) : null));
  }
  const note = $('facets-note');
  if (res.facetsExact === false && (res.facets || []).length) {
    note.hidden = false;
    note.textContent = `Counts cover a sample of ${fmt(res.facetsCounted)} of ` +
      `${res.totalExact === false ? 'about ' : ''}${fmt(res.total)} matches.`;
  } else {
    note.hidden = true;
  }
  if (!list.childNodes.length) list.append(el('p', { class: 'note' }, 'No facets for this query.'));
}

// ---- chart -----------------------------------------------------------------------------------

async function renderChart(q, seq) {
  const figure = $('chart-figure');
  const box = $('chart');
  let res;
  try {
    res = await api('/v1/aggregate?' + qs({ q, dimensions: 'repo,theme' }));
  } catch (err) {
    if (seq !== searchSeq) return;
    figure.hidden = false;
    box.replaceChildren(el('p', { class: 'note' }, 'Chart unavailable: ' + err.message));
    return;
  }
  if (seq !== searchSeq) return;
  const rows = (res.rows || []).map((r) => ({
    repo: (r.values || [])[0] || '(none)', theme: (r.values || [])[1] || '(none)', count: num(r.count),
  }));
  if (!rows.length) { figure.hidden = true; box.replaceChildren(); return; }
  figure.hidden = false;
  box.replaceChildren(barChart(rows));
}

// barChart draws one stacked horizontal bar per repository, a segment per theme.
function barChart(rows) {
  const themeTotals = new Map();
  const repoTotals = new Map();
  for (const r of rows) {
    themeTotals.set(r.theme, (themeTotals.get(r.theme) || 0) + r.count);
    repoTotals.set(r.repo, (repoTotals.get(r.repo) || 0) + r.count);
  }
  let themes = [...themeTotals.keys()].sort((a, b) => themeTotals.get(b) - themeTotals.get(a) || a.localeCompare(b));
  const shown = new Set(themes.slice(0, MAX_CHART_THEMES));
  if (themes.length > MAX_CHART_THEMES) themes = [...themes.slice(0, MAX_CHART_THEMES), 'other'];
  const color = new Map(themes.map((t, i) => [t, t === 'other' ? '#bab0ac' : PALETTE[i % PALETTE.length]]));
  const repos = [...repoTotals.keys()].sort((a, b) => repoTotals.get(b) - repoTotals.get(a) || a.localeCompare(b));
  const max = Math.max(...repoTotals.values());

  const labelW = 190, barW = 460, barH = 20, gap = 8, top = 8;
  const legendRows = Math.ceil(themes.length / 3);
  const height = top + repos.length * (barH + gap) + 12 + legendRows * 18;
  const width = labelW + barW + 60;
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-labelledby': 'chart-caption chart-desc' });
  root.append(svg('desc', { id: 'chart-desc' },
    `${repos.length} repositories, ${themes.length} themes; hover a bar for its count.`));
  repos.forEach((repo, i) => {
    const y = top + i * (barH + gap);
    const label = repo.length > 28 ? '…' + repo.slice(-27) : repo;
    root.append(svg('text', { x: labelW - 8, y: y + barH * 0.7, 'text-anchor': 'end' }, label));
    let x = labelW;
    const segments = new Map();
    for (const r of rows) {
      if (r.repo !== repo) continue;
      const t = shown.has(r.theme) ? r.theme : 'other';
      segments.set(t, (segments.get(t) || 0) + r.count);
    }
    for (const t of themes) {
      const n = segments.get(t);
      if (!n) continue;
      const w = Math.max(1, (n / max) * barW);
      root.append(svg('rect', { class: 'bar', x, y, width: w, height: barH, fill: color.get(t),
        'data-repo': repo, 'data-theme': t, 'data-count': n },
      svg('title', {}, `${repo} · ${t}: ${n}`)));
      x += w;
    }
    root.append(svg('text', { x: x + 6, y: y + barH * 0.7 }, fmt(repoTotals.get(repo))));
  });
  const ly = top + repos.length * (barH + gap) + 8;
  themes.forEach((t, i) => {
    const x = 8 + (i % 3) * ((width - 16) / 3);
    const y = ly + Math.floor(i / 3) * 18;
    root.append(svg('rect', { x, y, width: 12, height: 12, fill: color.get(t) }));
    root.append(svg('text', { x: x + 18, y: y + 10 }, t));
  });
  return root;
}

// ---- issue view ------------------------------------------------------------------------------

async function showIssue(ref) {
  const path = issuePath(ref);
  $('issue-title').textContent = 'Loading…';
  for (const id of ['issue-meta', 'issue-labels', 'issue-tags', 'issue-evidence', 'issue-body', 'comments']) {
    $(id).replaceChildren();
  }
  if (!path) { showError(new ApiError('INVALID_ARGUMENT', 'bad issue reference ' + ref)); return; }
  let res;
  try {
    res = await api(path);
  } catch (err) {
    showError(err);
    $('issue-title').textContent = 'Issue not available';
    return;
  }
  showError(null);
  const issue = res.issue || {};
  const repo = issue.repo || {};
  const tags = issue.tags || {};
  $('issue-title').replaceChildren(issue.title || '(no title)', ' ',
    el('span', { class: 'meta' }, `${repo.owner}/${repo.name}#${issue.key || issue.number}`));
  // replaceChildren would show a null as the text "null": absent parts are filtered out.
  $('issue-meta').replaceChildren(...[stateBadge(issue.state, issue.isPullRequest), goneBadge(issue),
    issue.author ? el('span', {}, 'by ' + issue.author) : null,
    el('span', {}, 'opened ' + day(issue.createdAt)),
    el('span', {}, 'updated ' + day(issue.updatedAt)),
    issue.closedAt ? el('span', {}, 'closed ' + day(issue.closedAt)) : null,
    issue.url ? el('a', { href: issue.url, rel: 'noreferrer noopener' }, 'on the tracker') : null,
  ].filter((part) => part !== null));
  $('issue-labels').replaceChildren(...(issue.labels || []).map((l) => el('span', { class: 'chip' }, l)));
  const dl = $('issue-tags');
  const pairs = [['Taxonomy', tags.taxonomy], ['Kind', tags.kind], ['Theme', tags.theme],
    ['Secondary themes', (tags.secondaryThemes || []).join(', ')],
    ['Sub-themes', (tags.subthemes || []).join(', ')], ['LLM-related', tags.llm ? 'yes' : 'no'],
    ['LLM keywords', (tags.keywords || []).join(', ')]];
  const classified = Boolean(tags.taxonomy || tags.kind || tags.theme);
  if (!classified) pairs.splice(0, pairs.length, ['Taxonomy', 'not classified yet']);
  for (const [k, v] of pairs) {
    if (!v) continue;
    dl.append(el('dt', {}, k), el('dd', {}, v));
  }
  const evidence = tags.evidence || [];
  $('issue-evidence').replaceChildren(...(evidence.length ? evidence : ['(none recorded)'])
    .map((e) => el('li', {}, e)));
  $('issue-body').textContent = issue.body || '(empty)';
  const comments = res.comments || [];
  $('comments-heading').textContent = `Comments (${comments.length})`;
  $('comments').replaceChildren(...comments.map((c) => el('li', { class: 'comment' },
    el('header', {}, el('strong', {}, c.author || 'unknown'), ' commented on ', day(c.createdAt),
      c.system ? ' (system note)' : ''),
    el('div', { class: 'text' }, c.body || ''))));
  document.title = `${issue.title} · issuescope`;
}

// ---- wiring ----------------------------------------------------------------------------------

let lastQuery = null;

function render() {
  const state = readHash();
  const input = $('q');
  if (document.activeElement !== input || input.value !== state.q) input.value = state.q;
  $('back').setAttribute('href', hashFor({ q: state.q }));
  if (state.issue) {
    $('search-view').hidden = true;
    $('issue-view').hidden = false;
    showIssue(state.issue);
    return;
  }
  document.title = 'issuescope search';
  $('issue-view').hidden = true;
  $('search-view').hidden = false;
  if (state.q !== lastQuery || !$('hits').childNodes.length) {
    lastQuery = state.q;
    runSearch(state.q);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    lastQuery = null;
    go({ q: $('q').value.trim() });
  });
  $('more').addEventListener('click', loadMore);
  $('home').addEventListener('click', (e) => { e.preventDefault(); go({ q: '' }); });
  window.addEventListener('hashchange', render);
  render();
});
