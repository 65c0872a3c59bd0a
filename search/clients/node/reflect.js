#!/usr/bin/env node
// Reflection client, a small grpcurl: discovers and calls what an issuescope server offers
// WITHOUT its .proto files, over the gRPC server reflection protocol
// (grpc.reflection.v1.ServerReflection, falling back to v1alpha for servers that have only that;
// every issuescope daemon serves both). Only the reflection protocol's own .proto is loaded (it
// ships in the @grpc/reflection package); every issuescope descriptor comes from the server.
//
//   node reflect.js list [--server 127.0.0.1:50051]      services and their methods
//   node reflect.js describe issuescope.v1.SearchRequest  one message, enum or service
//   node reflect.js call issuescope.v1.Search/Search '{"query": "kv cache", "page_size": 3}'
//                                                         one call: request and answers as JSON
//                                                         (server streams: one line per message)
//
// The server address comes from --server, else $ISSUESCOPE_SERVER, else 127.0.0.1:50051.
// Exit status: 0 on success, 1 when the server fails or does not know the symbol, 2 for a bad
// command line or missing dependencies.
'use strict';

const path = require('path');
const { parseArgs } = require('util');
const { toProtoJson } = require('./proto_json');
const { TLS_OPTIONS, TLS_USAGE, channelCredentials } = require('./tls');

const PROG = 'reflect.js';
const DEFAULT_SERVER = '127.0.0.1:50051';
const NOT_FOUND = 5;  // grpc.status.NOT_FOUND
const UNIMPLEMENTED = 12;  // grpc.status.UNIMPLEMENTED
const USAGE = `usage: node ${PROG} list [--server ADDR] [--timeout S]
       node ${PROG} describe SYMBOL [--server ADDR] [--timeout S]
       node ${PROG} call SERVICE/METHOD [JSON] [--server ADDR] [--timeout S]
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

function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        server: { type: 'string', default: process.env.ISSUESCOPE_SERVER || DEFAULT_SERVER },
        timeout: { type: 'string', default: '10' },
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
  const [command = 'list', ...rest] = parsed.positionals;
  const want = { list: [0, 0], describe: [1, 1], call: [1, 2] }[command];
  if (want === undefined) fail(`unknown command ${JSON.stringify(command)}\n${USAGE}`, 2);
  if (rest.length < want[0] || rest.length > want[1]) {
    fail(`${command} takes ${want[0] === want[1] ? want[0] : `${want[0]} or ${want[1]}`} argument(s), got ${rest.length}\n${USAGE}`, 2);
  }
  const timeout = Number(parsed.values.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) fail(`--timeout must be a positive number`, 2);
  return { command, args: rest, server: parsed.values.server, timeout, options: parsed.values };
}

// One reflection stream; ask() sends a request and resolves with its response (the server
// answers in order). Errors of the stream reject every pending and later ask().
class ReflectionSession {
  constructor(grpc, protoLoader, server, credentials, timeout, version) {
    this.version = version;
    const protoDir = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
    const definition = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, {
      includeDirs: [protoDir],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const reflection = grpc.loadPackageDefinition(definition).grpc.reflection[version];
    this.grpc = grpc;
    this.client = new reflection.ServerReflection(server, credentials);
    this.call = this.client.ServerReflectionInfo({ deadline: new Date(Date.now() + timeout * 1000) });
    this.pending = [];
    this.error = null;
    this.call.on('data', (response) => {
      const p = this.pending.shift();
      if (p) p.resolve(response);
    });
    this.call.on('error', (err) => {
      this.error = err;
      for (const p of this.pending.splice(0)) p.reject(err);
    });
    this.call.on('end', () => {
      const err = new Error('the server closed the reflection stream');
      for (const p of this.pending.splice(0)) p.reject(err);
    });
  }

  ask(request) {
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.call.write(request);
    }).then((response) => {
      if (response.message_response === 'error_response') {
        const e = response.error_response;
        const err = new Error(e.error_message);
        err.code = e.error_code;
        err.details = e.error_message;
        throw err;
      }
      return response;
    });
  }

  close() {
    this.call.end();
    this.client.close();
  }
}

// Every symbol of the files the server sent, by fully-qualified name (no leading dot).
class SymbolTable {
  constructor(descriptor) {
    this.descriptor = descriptor;
    this.files = new Map();
    this.symbols = new Map();
  }

  addFiles(buffers) {
    for (const buf of buffers) {
      const file = this.descriptor.FileDescriptorProto.toObject(
        this.descriptor.FileDescriptorProto.decode(buf), { enums: String, defaults: false, arrays: true });
      if (this.files.has(file.name)) continue;
      this.files.set(file.name, file);
      const prefix = file.package ? `${file.package}.` : '';
      for (const s of file.service) this.symbols.set(prefix + s.name, { kind: 'service', def: s, file });
      for (const e of file.enumType) this.symbols.set(prefix + e.name, { kind: 'enum', def: e, file });
      for (const m of file.messageType) this.addMessage(prefix + m.name, m, file);
    }
  }

  addMessage(name, message, file) {
    this.symbols.set(name, { kind: 'message', def: message, file });
    for (const e of message.enumType || []) this.symbols.set(`${name}.${e.name}`, { kind: 'enum', def: e, file });
    for (const m of message.nestedType || []) this.addMessage(`${name}.${m.name}`, m, file);
  }
}

const strip = (typeName) => String(typeName || '').replace(/^\./, '');

function fieldType(field, table) {
  if (field.typeName) {
    const target = table.symbols.get(strip(field.typeName));
    if (target && target.def.options && target.def.options.mapEntry) {
      const [k, v] = target.def.field;
      return `map<${fieldType(k, table)}, ${fieldType(v, table)}>`;
    }
    return strip(field.typeName);
  }
  return String(field.type).replace(/^TYPE_/, '').toLowerCase();
}

function describeMessage(name, message, table) {
  const lines = [`message ${name} {`];
  const oneofs = message.oneofDecl || [];
  for (const f of message.field || []) {
    const type = fieldType(f, table);
    let label = '';
    if (f.proto3Optional) label = 'optional ';
    else if (f.label === 'LABEL_REPEATED' && !type.startsWith('map<')) label = 'repeated ';
    const inOneof = f.oneofIndex !== undefined && !f.proto3Optional ? `  // oneof ${oneofs[f.oneofIndex].name}` : '';
    lines.push(`  ${label}${type} ${f.name} = ${f.number};${inOneof}`);
  }
  lines.push('}');
  return lines;
}

function describeService(name, service) {
  const lines = [`service ${name} {`];
  for (const m of service.method || []) {
    const input = `${m.clientStreaming ? 'stream ' : ''}${strip(m.inputType)}`;
    const output = `${m.serverStreaming ? 'stream ' : ''}${strip(m.outputType)}`;
    lines.push(`  rpc ${m.name}(${input}) returns (${output});`);
  }
  lines.push('}');
  return lines;
}

function describeEnum(name, e) {
  return [`enum ${name} {`, ...(e.value || []).map((v) => `  ${v.name} = ${v.number || 0};`), '}'];
}

// Fetches the file declaring `symbol` (with its dependencies) into the table.
async function load(session, table, symbol) {
  if (table.symbols.has(symbol)) return table.symbols.get(symbol);
  const response = await session.ask({ file_containing_symbol: symbol });
  table.addFiles(response.file_descriptor_response.file_descriptor_proto);
  const found = table.symbols.get(symbol);
  if (!found) throw Object.assign(new Error(`the server sent no descriptor of ${symbol}`), { code: NOT_FOUND });
  return found;
}

async function run(session, table, command, args) {
  const out = [];
  if (command === 'list') {
    const listed = await session.ask({ list_services: '' });
    const names = listed.list_services_response.service.map((s) => s.name).sort();
    for (const name of names) {
      let found;
      try {
        found = await load(session, table, name);
      } catch (err) {
        // A service registered without a descriptor in the server's pool (gRPC C++'s built-in
        // health service is one): listed, but its methods are unknown.
        if (err.code !== NOT_FOUND) throw err;
        out.push(`${name}  (no descriptor: ${err.details || err.message})`);
        continue;
      }
      const { def, file } = found;
      out.push(`${name}  (${file.name}, ${(def.method || []).length} methods)`);
      out.push(...describeService(name, def).slice(1, -1).map((l) => `  ${l.trim()}`));
    }
  } else if (command === 'call') {
    return { call: await prepareCall(session, table, args[0], args[1]) };
  } else {
    const symbol = args[0].replace(/^\./, '');
    const { kind, def, file } = await load(session, table, symbol);
    out.push(`// ${kind} ${symbol}, declared in ${file.name}`);
    if (kind === 'message') out.push(...describeMessage(symbol, def, table));
    else if (kind === 'service') out.push(...describeService(symbol, def));
    else out.push(...describeEnum(symbol, def));
  }
  return out;
}

// prepareCall resolves SERVICE/METHOD and its request and response types from the server's
// descriptors (protobufjs types built from them), and encodes the JSON request.
async function prepareCall(session, table, target, json) {
  const slash = target.lastIndexOf('/');
  if (slash <= 0) throw Object.assign(new Error(`expected SERVICE/METHOD, got ${target}`), { usage: true });
  const serviceName = target.slice(0, slash).replace(/^\./, '');
  const methodName = target.slice(slash + 1);
  const { kind, def } = await load(session, table, serviceName);
  if (kind !== 'service') throw Object.assign(new Error(`${serviceName} is a ${kind}, not a service`), { code: NOT_FOUND });
  const method = (def.method || []).find((m) => m.name === methodName);
  if (!method) throw Object.assign(new Error(`${serviceName} has no method ${methodName}`), { code: NOT_FOUND });
  if (method.clientStreaming) throw Object.assign(new Error(`${target} takes a client stream; only unary and server-streaming calls are supported`), { usage: true });
  const protobuf = require('protobufjs');
  const descriptor = table.descriptor;
  const set = descriptor.FileDescriptorSet.fromObject({ file: [...table.files.values()] });
  const root = protobuf.Root.fromDescriptor(set);
  const requestType = root.lookupType(strip(method.inputType));
  const responseType = root.lookupType(strip(method.outputType));
  let request;
  try {
    request = JSON.parse(json || '{}');
  } catch (e) {
    throw Object.assign(new Error(`the request is not JSON: ${e.message}`), { usage: true });
  }
  const problem = requestType.verify(request);
  if (problem) throw Object.assign(new Error(`bad request for ${requestType.fullName.slice(1)}: ${problem}`), { usage: true });
  return {
    path: `/${serviceName}/${methodName}`,
    streaming: method.serverStreaming,
    bytes: requestType.encode(requestType.fromObject(request)).finish(),
    decode: (buf) => toProtoJson(responseType.toObject(responseType.decode(buf),
      { longs: String, enums: String, defaults: true, arrays: true })),
  };
}

// invoke runs a prepared call; resolves with its output lines.
function invoke(grpc, server, credentials, timeout, call) {
  const client = new grpc.Client(server, credentials);
  const options = { deadline: new Date(Date.now() + timeout * 1000) };
  const serialize = (b) => b;
  const deserialize = (b) => call.decode(b);
  return new Promise((resolve, reject) => {
    if (!call.streaming) {
      client.makeUnaryRequest(call.path, serialize, deserialize, call.bytes, new grpc.Metadata(), options,
        (err, response) => {
          client.close();
          if (err) reject(err); else resolve([JSON.stringify(response, null, 2)]);
        });
      return;
    }
    const lines = [];
    const stream = client.makeServerStreamRequest(call.path, serialize, deserialize, call.bytes, new grpc.Metadata(), options);
    stream.on('data', (m) => lines.push(JSON.stringify(m)));
    stream.on('error', (err) => { client.close(); reject(err); });
    stream.on('end', () => { client.close(); resolve(lines); });
  });
}

async function runWithFallback(grpc, protoLoader, descriptor, server, credentials, timeout, command, args) {
  for (const version of ['v1', 'v1alpha']) {
    const session = new ReflectionSession(grpc, protoLoader, server, credentials, timeout, version);
    const table = new SymbolTable(descriptor);
    try {
      const result = await run(session, table, command, args);
      session.close();
      if (result.call) return invoke(grpc, server, credentials, timeout, result.call);
      return result;
    } catch (err) {
      session.close();
      // A server without reflection v1 answers UNIMPLEMENTED: ask v1alpha.
      if (version === 'v1' && err.code === UNIMPLEMENTED) continue;
      throw err;
    }
  }
  return [];
}

function main() {
  const { command, args, server, timeout, options } = parseCommandLine(process.argv.slice(2));
  const grpc = requireDependency('@grpc/grpc-js');
  const protoLoader = requireDependency('@grpc/proto-loader');
  requireDependency('@grpc/reflection');
  requireDependency('protobufjs');
  const descriptor = requireDependency('protobufjs/ext/descriptor');
  const credentials = channelCredentials(grpc, options, fail);
  runWithFallback(grpc, protoLoader, descriptor, server, credentials, timeout, command, args).then(
    (lines) => {
      if (lines.length) process.stdout.write(lines.join('\n') + '\n');
    },
    (err) => {
      if (err.usage) fail(err.message, 2);
      const code = typeof err.code === 'number' ? grpc.status[err.code] || err.code : 'ERROR';
      fail(`${server}: ${code}: ${cleanDetails(err.details || err.message)}`, 1);
    });
}

main();
