// TLS options shared by client.js and reflect.js. Plaintext unless TLS is asked for:
//   --tls             TLS, trusting the system's CAs
//   --tls-ca FILE     TLS, trusting this CA (PEM)
//   --tls-cert FILE   a client certificate chain (PEM) to present, with --tls-key FILE
//                     (for a server started with --tls-client-ca)
'use strict';

const fs = require('fs');

const TLS_OPTIONS = {
  tls: { type: 'boolean', default: false },
  'tls-ca': { type: 'string', default: '' },
  'tls-cert': { type: 'string', default: '' },
  'tls-key': { type: 'string', default: '' },
};

const TLS_USAGE = '[--tls | --tls-ca FILE] [--tls-cert FILE --tls-key FILE]';

// readPem returns the file's bytes; fail(message, 2) names the flag when it is unreadable or
// not PEM.
function readPem(flag, file, fail) {
  let data;
  try {
    data = fs.readFileSync(file);
  } catch (e) {
    return fail(`cannot read ${flag} ${file}: ${e.code || e.message}`, 2);
  }
  if (!data.includes('-----BEGIN ')) return fail(`${flag} ${file} is not a PEM file`, 2);
  return data;
}

// grpc-js names the server (TLS SNI) by the target's host even when that is an IP address,
// which Node.js warns about on every connection (DEP0123: not permitted by RFC 6066, ignored);
// the warning tells the user of this client nothing, so it alone is not printed.
function quietIpServerNameWarning() {
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    if (w.code !== 'DEP0123') process.stderr.write(`${w.name}: ${w.message}\n`);
  });
}

// channelCredentials turns the parsed options into grpc-js channel credentials.
function channelCredentials(grpc, options, fail) {
  const cert = options['tls-cert'];
  const key = options['tls-key'];
  if (Boolean(cert) !== Boolean(key)) return fail('--tls-cert and --tls-key go together', 2);
  if (!options.tls && !options['tls-ca'] && !cert) return grpc.credentials.createInsecure();
  quietIpServerNameWarning();
  return grpc.credentials.createSsl(
    options['tls-ca'] ? readPem('--tls-ca', options['tls-ca'], fail) : null,
    key ? readPem('--tls-key', key, fail) : null,
    cert ? readPem('--tls-cert', cert, fail) : null);
}

module.exports = { TLS_OPTIONS, TLS_USAGE, channelCredentials };
