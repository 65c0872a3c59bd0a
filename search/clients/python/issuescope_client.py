#!/usr/bin/python3
"""Example Python client of the issuescope search service (issuescope.v1.Search).

    issuescope_client.py search '"illegal memory access" is:open' --server 127.0.0.1:7400
    issuescope_client.py search 'label:bug' --facets repo,label --facet-limit 5
    issuescope_client.py issue github:pytorch/pytorch 12345

It uses Debian's python3-grpcio and python3-protobuf and the stubs that the build generates from
proto/issuescope/v1/*.proto with protoc's Python generator and grpc_python_plugin (CMake target
`issuescope_python_stubs`, written to <build>/clients/python). The stubs are found through
$ISSUESCOPE_PYTHON_STUBS, then PYTHONPATH, then <repo>/build/clients/python.

The server address comes from --server, else $ISSUESCOPE_SERVER, else 127.0.0.1:50051.
Plaintext unless TLS is asked for: --tls-ca FILE verifies the server against that CA (PEM),
--tls uses the system's trusted CAs, and --tls-cert FILE --tls-key FILE present a client
certificate (for a server started with --tls-client-ca).
Exit status: 0 on success, 1 when the call fails (the message names the gRPC status and the
server's message), 2 for a bad command line or missing stubs.
"""

import argparse
import json
import os
import re
import sys

PROG = "issuescope_client"
DEFAULT_SERVER = "127.0.0.1:50051"
STATE_NAMES = {0: "unspecified", 1: "open", 2: "closed", 3: "progressing", 4: "rejected"}


def fail(message, code):
    """Prints one line on stderr and exits with `code`."""
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(code)


def load_stubs():
    """Imports grpc and the generated modules; a clear message when either is missing."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("ISSUESCOPE_PYTHON_STUBS", ""),
                  os.path.join(here, "..", "..", "..", "build", "clients", "python")]
    for path in reversed([c for c in candidates if c and os.path.isdir(c)]):
        sys.path.insert(0, os.path.abspath(path))
    # gRPC's core logs failed TLS handshakes on stderr as well; the one-line error this client
    # prints already names the cause. GRPC_VERBOSITY set by the user still wins.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    try:
        import grpc  # noqa: F401  (python3-grpcio)
    except ImportError:
        fail("the grpc module is missing: install python3-grpcio and run with /usr/bin/python3", 2)
    try:
        from issuescope.v1 import search_pb2, search_pb2_grpc
    except ImportError as e:
        fail(f"generated stubs not found ({e}): build the target issuescope_python_stubs and "
             "set ISSUESCOPE_PYTHON_STUBS to <build>/clients/python", 2)
    return grpc, search_pb2, search_pb2_grpc


def parse_number(text):
    """An issue number: decimal, or a Gitee key "I" + base-36 digits (e.g. I1DACG)."""
    if text.isdigit():
        return int(text)
    if re.fullmatch(r"I[0-9A-Z]+", text):
        return int(text[1:], 36)
    raise argparse.ArgumentTypeError(f"not an issue number or Gitee key: {text!r}")


def parse_slug(text):
    """A repository slug "tracker:owner/name"; a bare "owner/name" means GitHub."""
    if "/" not in text:
        raise argparse.ArgumentTypeError(f"not a repository (TRACKER:OWNER/NAME): {text!r}")
    return text if ":" in text else "github:" + text


def positive_int(text):
    """An integer ≥ 0 (0 means the server's default)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


def build_parser():
    """The command line: two subcommands sharing --server and --timeout."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--server", default=os.environ.get("ISSUESCOPE_SERVER", DEFAULT_SERVER),
                        help="HOST:PORT of issuescope-search (default $ISSUESCOPE_SERVER or "
                             f"{DEFAULT_SERVER})")
    common.add_argument("--timeout", type=float, default=10.0,
                        help="deadline of the call in seconds (default 10)")
    common.add_argument("--tls", action="store_true",
                        help="connect over TLS, trusting the system's CAs")
    common.add_argument("--tls-ca", default="", metavar="FILE",
                        help="connect over TLS, trusting this CA (PEM)")
    common.add_argument("--tls-cert", default="", metavar="FILE",
                        help="client certificate chain (PEM) to present; needs --tls-key")
    common.add_argument("--tls-key", default="", metavar="FILE",
                        help="private key (PEM) of --tls-cert")
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("search", parents=[common], help="run a query (docs/QUERY.md)")
    s.add_argument("query", help='e.g. \'"illegal memory access" repo:owner/name is:open\'')
    s.add_argument("--page-size", type=positive_int, default=20, help="hits to show (max 1000)")
    s.add_argument("--page-token", default="", help="next_page_token of a previous page")
    s.add_argument("--facets", default="",
                   help="comma-separated facets to count: repo,label,state,type,kind,theme,"
                        "subtheme,llm,author,year,tracker")
    s.add_argument("--facet-limit", type=positive_int, default=0, help="values per facet")
    s.add_argument("--json", action="store_true", help="one JSON object per hit per line")
    i = sub.add_parser("issue", parents=[common], help="fetch one issue with its comments")
    i.add_argument("slug", type=parse_slug, help="repository, e.g. github:pytorch/pytorch")
    i.add_argument("number", type=parse_number, help="issue number (or Gitee key)")
    i.add_argument("--json", action="store_true", help="print the issue as JSON")
    return parser


def print_search(response, as_json, json_format):
    """Hits, then the total and facet counts (or JSON lines with --json)."""
    if as_json:
        for hit in response.hits:
            print(json.dumps(json_format.MessageToDict(hit, preserving_proto_field_name=True,
                                                    including_default_value_fields=True),
                             ensure_ascii=False))
        return
    for hit in response.hits:
        state = STATE_NAMES.get(hit.state, str(hit.state))
        kind = "PR" if hit.is_pull_request else "issue"
        print(f"{hit.repo_slug}#{hit.number}  [{state} {kind}]  {hit.title}")
        labels = f"  labels: {', '.join(hit.labels)}" if hit.labels else ""
        print(f"    score {hit.score:.3f}  comments {hit.comment_count}{labels}")
    print(f"{response.total} matching issues, {len(response.hits)} shown "
          f"({response.took_us} µs)")
    if response.next_page_token:
        print(f"next page: --page-token {response.next_page_token}")
    for facet in response.facets:
        values = ", ".join(f"{v.value}={v.count}" for v in facet.values)
        print(f"facet {facet.name} ({facet.distinct_values} values): {values}")
    if response.facets and not response.facets_exact:
        print(f"facet counts cover {response.facets_counted} of {response.total} matches")


def print_issue(result, as_json, json_format):
    """The issue's header, body and comments (or JSON with --json)."""
    if as_json:
        print(json.dumps(json_format.MessageToDict(result, preserving_proto_field_name=True,
                                               including_default_value_fields=True),
                         ensure_ascii=False, indent=2))
        return
    issue = result.issue
    state = STATE_NAMES.get(issue.state, str(issue.state))
    print(f"{issue.repo.owner}/{issue.repo.name}#{issue.key or issue.number}: {issue.title}")
    print(f"state: {state}  author: {issue.author}  comments: {len(result.comments)}")
    if issue.labels:
        print(f"labels: {', '.join(issue.labels)}")
    if issue.HasField("created_at"):
        print(f"created: {issue.created_at.ToJsonString()}")
    if issue.url:
        print(f"url: {issue.url}")
    if issue.tags.kind:
        print(f"kind: {issue.tags.kind}  theme: {issue.tags.theme}  llm: {issue.tags.llm}")
    print()
    print(issue.body)
    for c in result.comments:
        print(f"\n--- {c.author} at {c.created_at.ToJsonString()}")
        print(c.body)


def read_pem(flag, path):
    """The bytes of a PEM file named by `flag`; exits 2 naming the flag when unreadable."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"cannot read {flag} {path}: {e.strerror}", 2)
    if b"-----BEGIN " not in data:
        fail(f"{flag} {path} is not a PEM file", 2)
    return data


def open_channel(grpc, args):
    """A plaintext channel, or a TLS one when --tls, --tls-ca or --tls-cert is given."""
    if bool(args.tls_cert) != bool(args.tls_key):
        fail("--tls-cert and --tls-key go together", 2)
    if not (args.tls or args.tls_ca or args.tls_cert):
        return grpc.insecure_channel(args.server)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=read_pem("--tls-ca", args.tls_ca) if args.tls_ca else None,
        private_key=read_pem("--tls-key", args.tls_key) if args.tls_key else None,
        certificate_chain=read_pem("--tls-cert", args.tls_cert) if args.tls_cert else None)
    return grpc.secure_channel(args.server, credentials)


def main(argv):
    args = build_parser().parse_args(argv)
    grpc, search_pb2, search_pb2_grpc = load_stubs()
    from google.protobuf import json_format
    with open_channel(grpc, args) as channel:
        stub = search_pb2_grpc.SearchStub(channel)
        try:
            if args.command == "search":
                facets = [f.strip() for f in args.facets.split(",") if f.strip()]
                request = search_pb2.SearchRequest(query=args.query, page_size=args.page_size,
                                                   page_token=args.page_token, facets=facets,
                                                   facet_limit=args.facet_limit)
                print_search(stub.Search(request, timeout=args.timeout), args.json, json_format)
            else:
                request = search_pb2.SearchGetIssueRequest(repo_slug=args.slug,
                                                           number=args.number)
                print_issue(stub.GetIssue(request, timeout=args.timeout), args.json, json_format)
        except grpc.RpcError as e:
            fail(f"{args.server}: {e.code().name}: {e.details()}", 1)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
