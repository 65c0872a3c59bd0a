#!/usr/bin/env node
// Example Node.js client of the issuescope search service (issuescope.v1.Search), using
// @grpc/grpc-js with @grpc/proto-loader, which loads proto/issuescope/v1/search.proto (and
// model.proto) at run time: no generated code.
//
//   node client.js search '"illegal memory access" is:open' --server 127.0.0.1:7400
//   node client.js search 'label:bug' --facets repo,label --facet-limit 5 [--json]
//   node client.js issue github:pytorch/pytorch 12345 [--json]
//
// The .proto files are read from $ISSUESCOPE_PROTO_DIR, else the repository's proto/ folder.
// The server address comes from --server, else $ISSUESCOPE_SERVER, else 127.0.0.1:50051.
// Plaintext unless --tls, --tls-ca or --tls-cert/--tls-key ask for TLS (tls.js).
// Exit status: 0 on success, 1 when the call fails (the message names the gRPC status and the
// server's message), 2 for a bad command line or missing dependencies.
'use strict';

const path = require('path');
const { parseArgs } = require('util');
const { toProtoJson } = require('./proto_json');
const { TLS_OPTIONS, TLS_USAGE, channelCredentials } = require('./tls');

const PROG = 'client.js';
const DEFAULT_SERVER = '127.0.0.1:50051';
const USAGE = `usage: node ${PROG} search QUERY [--server ADDR] [--timeout S] [--page-size N]
                      [--page-token T] [--facets a,b] [--facet-limit N] [--json]
       node ${PROG} issue SLUG NUMBER [--server ADDR] [--timeout S] [--json]
  TLS: ${TLS_USAGE}`;

function fail(message, code) {
  process.stderr.write(`${PROG}: ${message}\n`);
  process.exit(code);
}

// grpc-js appends an empty "Resolution note:" to connection errors; drop it.
function cleanDetails(details) {
  return String(details || '').replace(/\s*Resolution note:\s*$/, '').trim();
}

function requireDependency(name) {
  try {
    return require(name);
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e;
    return fail(`${name} is not installed: run \`npm ci\` in ${__dirname}`, 2);
  }
}

// Parses argv into {command, positionals, options}; exits 2 with the usage on bad input.
function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        server: { type: 'string', default: process.env.ISSUESCOPE_SERVER || DEFAULT_SERVER },
        timeout: { type: 'string', default: '10' },
        'page-size': { type: 'string', default: '20' },
        'page-token': { type: 'string', default: '' },
        facets: { type: 'string', default: '' },
        'facet-limit': { type: 'string', default: '0' },
        json: { type: 'boolean', default: false },
        ...TLS_OPTIONS,
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    fail(`${e.message}\n${USAGE}`, 2);
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE + '\n');
    process.exit(0);
  }
  const [command, ...rest] = parsed.positionals;
  const want = { search: 1, issue: 2 }[command];
  if (want === undefined) fail(`unknown or missing command ${JSON.stringify(command || '')}\n${USAGE}`, 2);
  if (rest.length !== want) fail(`${command} takes ${want} argument(s), got ${rest.length}\n${USAGE}`, 2);
  const options = parsed.values;
  for (const name of ['timeout', 'page-size', 'facet-limit']) {
    const n = Number(options[name]);
    if (!Number.isFinite(n) || n < 0) fail(`--${name} must be a non-negative number, got ${options[name]}`, 2);
    options[name] = n;
  }
  return { command, args: rest, options };
}

// "github:owner/name"; a bare "owner/name" means GitHub.
function parseSlug(text) {
  if (!text.includes('/')) fail(`not a repository (TRACKER:OWNER/NAME): ${text}`, 2);
  return text.includes(':') ? text : `github:${text}`;
}

// A decimal issue number, or a Gitee key "I" + base-36 digits; returned as a decimal string
// (int64 fields travel as strings with proto-loader's `longs: String`).
function parseNumber(text) {
  if (/^[0-9]+$/.test(text)) return text;
  if (/^I[0-9A-Z]+$/.test(text)) {
    let n = 0n;
    for (const ch of text.slice(1)) n = n * 36n + BigInt(parseInt(ch, 36));
    return n.toString();
  }
  return fail(`not an issue number or Gitee key: ${text}`, 2);
}

function loadSearchClient(grpc, protoLoader, server, credentials) {
  const protoDir = process.env.ISSUESCOPE_PROTO_DIR || path.resolve(__dirname, '..', '..', '..', 'proto');
  let definition;
  try {
    definition = protoLoader.loadSync('issuescope/v1/search.proto', {
      includeDirs: [protoDir],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
    });
  } catch (e) {
    fail(`cannot load issuescope/v1/search.proto from ${protoDir}: ${e.message}`, 2);
  }
  const v1 = grpc.loadPackageDefinition(definition).issuescope.v1;
  return new v1.Search(server, credentials);
}

function timestamp(ts) {
  if (!ts || ts.seconds === undefined) return '';
  return new Date(Number(ts.seconds) * 1000).toISOString().replace('.000Z', 'Z');
}

function stateName(state) {
  return String(state).replace(/^ISSUE_STATE_/, '').toLowerCase();
}

function printSearch(response, asJson) {
  if (asJson) {
    for (const hit of response.hits) process.stdout.write(JSON.stringify(toProtoJson(hit)) + '\n');
    return;
  }
  for (const hit of response.hits) {
    const kind = hit.is_pull_request ? 'PR' : 'issue';
    process.stdout.write(`${hit.repo_slug}#${hit.number}  [${stateName(hit.state)} ${kind}]  ${hit.title}\n`);
    const labels = hit.labels.length ? `  labels: ${hit.labels.join(', ')}` : '';
    process.stdout.write(`    score ${hit.score.toFixed(3)}  comments ${hit.comment_count}${labels}\n`);
  }
  process.stdout.write(`${response.total} matching issues, ${response.hits.length} shown (${response.took_us} µs)\n`);
  if (response.next_page_token) process.stdout.write(`next page: --page-token ${response.next_page_token}\n`);
  for (const facet of response.facets) {
    const values = facet.values.map((v) => `${v.value}=${v.count}`).join(', ');
    process.stdout.write(`facet ${facet.name} (${facet.distinct_values} values): ${values}\n`);
  }
  if (response.facets.length && !response.facets_exact) {
    process.stdout.write(`facet counts cover ${response.facets_counted} of ${response.total} matches\n`);
  }
}

function printIssue(result, asJson) {
  if (asJson) {
    process.stdout.write(JSON.stringify(toProtoJson(result), null, 2) + '\n');
    return;
  }
  const issue = result.issue;
  const lines = [
    `${issue.repo.owner}/${issue.repo.name}#${issue.key || issue.number}: ${issue.title}`,
    `state: ${stateName(issue.state)}  author: ${issue.author}  comments: ${result.comments.length}`,
  ];
  if (issue.labels.length) lines.push(`labels: ${issue.labels.join(', ')}`);
  if (issue.created_at) lines.push(`created: ${timestamp(issue.created_at)}`);
  if (issue.url) lines.push(`url: ${issue.url}`);
  if (issue.tags && issue.tags.kind) {
    lines.push(`kind: ${issue.tags.kind}  theme: ${issue.tags.theme}  llm: ${issue.tags.llm}`);
  }
  lines.push('', issue.body);
  for (const c of result.comments) lines.push('', `--- ${c.author} at ${timestamp(c.created_at)}`, c.body);
  process.stdout.write(lines.join('\n') + '\n');
}

function main() {
  const { command, args, options } = parseCommandLine(process.argv.slice(2));
  const grpc = requireDependency('@grpc/grpc-js');
  const protoLoader = requireDependency('@grpc/proto-loader');
  const credentials = channelCredentials(grpc, options, fail);
  const client = loadSearchClient(grpc, protoLoader, options.server, credentials);
  const deadline = new Date(Date.now() + options.timeout * 1000);
  const done = (print) => (err, response) => {
    client.close();
    if (err) fail(`${options.server}: ${grpc.status[err.code] || err.code}: ${cleanDetails(err.details)}`, 1);
    print(response, options.json);
  };
  if (command === 'search') {
    const request = {
      query: args[0],
      page_size: options['page-size'],
      page_token: options['page-token'],
      facets: options.facets.split(',').map((f) => f.trim()).filter((f) => f),
      facet_limit: options['facet-limit'],
    };
    client.Search(request, { deadline }, done(printSearch));
  } else {
    const request = { repo_slug: parseSlug(args[0]), number: parseNumber(args[1]) };
    client.GetIssue(request, { deadline }, done(printIssue));
  }
}

main();
