// Renders messages decoded by proto-loader / protobufjs (keepCase, longs and enums as strings,
// defaults on) as protobuf's canonical JSON with the .proto's field names, the same text the
// Python client prints with MessageToDict(preserving_proto_field_name=True,
// including_default_value_fields=True): google.protobuf.Timestamp as RFC 3339 ("…Z", 0, 3, 6 or
// 9 fraction digits), int64 as strings, enums by name, unset message fields left out.
'use strict';

function rfc3339(seconds, nanos) {
  const base = new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  const n = Number(nanos || 0);
  if (n === 0) return `${base}Z`;
  let digits = String(n).padStart(9, '0');
  if (n % 1000000 === 0) digits = digits.slice(0, 3);
  else if (n % 1000 === 0) digits = digits.slice(0, 6);
  return `${base}.${digits}Z`;
}

function isTimestamp(value) {
  const keys = Object.keys(value);
  return keys.length === 2 && keys.includes('seconds') && keys.includes('nanos');
}

function toProtoJson(value) {
  if (Array.isArray(value)) return value.map(toProtoJson);
  if (value === null || typeof value !== 'object') return value;
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (isTimestamp(value)) return rfc3339(value.seconds, value.nanos);
  const out = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === null || v === undefined) continue;  // unset message field
    out[key] = toProtoJson(v);
  }
  return out;
}

module.exports = { toProtoJson, rfc3339 };
