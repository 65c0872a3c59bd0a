#!/usr/bin/python3
"""End-to-end tests of the example clients (search/clients/, docs/CLIENTS.md).

Each test class starts the tracker simulator on loopback, crawls it with `issuescope crawl` into
a temporary data directory, serves the index with issuescope-search (port file, loopback), runs
one client as a real process and asserts on its output and exit status:

  PythonClientTest      search/clients/python/issuescope_client.py (generated stubs)
  NodeClientTest        search/clients/node/client.js (proto-loader over proto/)
  ReflectionClientTest  search/clients/node/reflect.js (no issuescope .proto files)
  TlsClientTest         the three clients against a search service that serves TLS and asks
                        for client certificates (--tls-ca, --tls-cert, --tls-key)

Run by CTest (labels e2e, clients) as
  /usr/bin/python3 clients_e2e_test.py ClassName
with ISSUESCOPE_BIN_DIR, ISSUESCOPE_SOURCE_DIR and ISSUESCOPE_PYTHON_STUBS set.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

BIN_DIR = os.environ.get("ISSUESCOPE_BIN_DIR", "")
SOURCE_DIR = os.environ.get("ISSUESCOPE_SOURCE_DIR", "")
PYTHON_STUBS = os.environ.get("ISSUESCOPE_PYTHON_STUBS", "")
CLIENTS_DIR = os.path.join(SOURCE_DIR, "search", "clients")
NODE_DIR = os.path.join(CLIENTS_DIR, "node")
PHRASE = "pangolin lattice overflow"
PLANTED = 3
STARTUP = 60.0   # seconds a server gets to write its port file
RUN_LIMIT = 120  # seconds a client or crawl run gets


def wait_for_port(path, proc, log):
    """Waits for `proc` to write its port file; fails with its log if it exits or times out."""
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                text = f.read().strip()
            if text.isdigit():
                return int(text)
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}: {read(log)}")
        time.sleep(0.05)
    raise RuntimeError(f"{proc.args[0]} wrote no port file within {STARTUP}s: {read(log)}")


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def stop(proc):
    """SIGTERM, then SIGKILL if the process outlives a deadline."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Cluster:
    """Simulator + crawled index + issuescope-search in a temporary directory."""

    def __init__(self):
        for name in ("issuescope", "issuescope-simulator", "issuescope-search"):
            if not os.access(os.path.join(BIN_DIR, name), os.X_OK):
                raise RuntimeError(f"{name} not built in {BIN_DIR!r}")
        self.dir = tempfile.mkdtemp(prefix="issuescope-clients-")
        self.sim = self.search = None
        self.sim = self.spawn("sim", [
            "issuescope-simulator", "--repos=2", "--issues-per-repo=60", "--comments-per-issue=2",
            "--seed=23", f"--plant-phrase={PHRASE}", f"--plant-count={PLANTED}",
            f"--port-file={self.dir}/sim.port"])
        sim_port = wait_for_port(f"{self.dir}/sim.port", self.sim, f"{self.dir}/sim.log")
        api = f"http://127.0.0.1:{sim_port}"
        with urllib.request.urlopen(f"{api}/_sim/corpus", timeout=30) as res:
            self.corpus = json.load(res)
        repos = sorted({"github:" + e["repo"] for e in self.corpus})
        crawl = subprocess.run(
            [os.path.join(BIN_DIR, "issuescope"), "crawl", *repos, "--data", f"{self.dir}/data",
             "--api-url", api], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=RUN_LIMIT)
        if crawl.returncode != 0:
            raise RuntimeError(f"issuescope crawl failed ({crawl.returncode}): {crawl.stdout}")
        self.search = self.spawn("search", [
            "issuescope-search", "--listen=127.0.0.1:0", f"--port-file={self.dir}/search.port",
            f"--index={self.dir}/data/index"])
        port = wait_for_port(f"{self.dir}/search.port", self.search, f"{self.dir}/search.log")
        self.address = f"127.0.0.1:{port}"

    def spawn(self, name, argv):
        argv = [os.path.join(BIN_DIR, argv[0])] + argv[1:]
        with open(f"{self.dir}/{name}.log", "w") as log:
            return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir)

    def planted(self):
        """The planted issues (repo "owner/name", number, title), in corpus order."""
        return [(e["repo"], e["number"], e["title"]) for e in self.corpus if e["planted"]]

    def close(self, keep):
        stop(self.search)
        stop(self.sim)
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


class ClientTestBase(unittest.TestCase):
    """Starts one cluster for the class; subclasses define `command` (argv prefix)."""
    command = None

    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster()
        cls.failed = False

    @classmethod
    def tearDownClass(cls):
        cls.cluster.close(keep=cls.failed)
        if cls.failed:
            print(f"logs kept in {cls.cluster.dir}", file=sys.stderr)

    def run(self, result=None):
        result = super().run(result)
        if result is not None and not result.wasSuccessful():
            type(self).failed = True
        return result

    def client(self, *args, server=None, env=None):
        """Runs the client; returns (exit code, stdout, stderr)."""
        argv = list(self.command) + list(args) + ["--server", server or self.cluster.address]
        full_env = dict(os.environ, **(env or {}))
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=RUN_LIMIT, env=full_env, cwd=self.cluster.dir)
        return p.returncode, p.stdout, p.stderr

    def ok(self, *args):
        code, out, err = self.client(*args)
        self.assertEqual(code, 0, f"{args} failed: {err}{out}")
        return out


class SearchClientTests:
    """The same behaviour, asserted for the Python and the Node.js client."""

    def test_search_returns_the_planted_hits(self):
        out = self.ok("search", f'"{PHRASE}"', "--facets", "repo,state")
        self.assertIn(f"{PLANTED} matching issues, {PLANTED} shown", out)
        for repo, number, title in self.cluster.planted():
            self.assertIn(f"github:{repo}#{number}", out)
            self.assertIn(title, out)
        self.assertRegex(out, r"facet repo \(\d+ values\): \S+/\S+=\d")
        self.assertIn("facet state (", out)

    def test_search_json_lines(self):
        out = self.ok("search", f'"{PHRASE}"', "--json")
        hits = [json.loads(line) for line in out.splitlines() if line.strip()]
        self.assertEqual(len(hits), PLANTED)
        expected = {(f"github:{r}", n) for r, n, _ in self.cluster.planted()}
        self.assertEqual({(h["repo_slug"], int(h["number"])) for h in hits}, expected)

    def test_issue_fetches_title_and_body(self):
        repo, number, title = self.cluster.planted()[0]
        out = self.ok("issue", f"github:{repo}", str(number))
        self.assertTrue(out.startswith(f"{repo}#{number}: {title}\n"), out)
        self.assertIn(PHRASE, out.lower())
        # A bare OWNER/NAME means GitHub.
        self.assertIn(title, self.ok("issue", repo, str(number)))

    def test_clear_errors(self):
        repo, _, _ = self.cluster.planted()[0]
        cases = [
            ("missing issue", ("issue", f"github:{repo}", "999999"), None, 1, "NOT_FOUND"),
            ("malformed query", ("search", '"unterminated phrase'), None, 1, "INVALID_ARGUMENT"),
            ("unknown facet", ("search", "x", "--facets", "colour"), None, 1, "INVALID_ARGUMENT"),
            ("no server", ("search", "x"), "127.0.0.1:1", 1, "UNAVAILABLE"),
            ("bad repository", ("issue", "pytorch", "1"), None, 2, "pytorch"),
            ("bad number", ("issue", f"github:{repo}", "12x"), None, 2, "12x"),
        ]
        for name, args, server, code, message in cases:
            with self.subTest(name):
                got, out, err = self.client(*args, server=server)
                self.assertEqual(got, code, f"{err}{out}")
                self.assertIn(message, err)
                self.assertNotIn("Traceback", err)
                self.assertNotIn("    at ", err)  # no Node.js stack trace
                if code == 1:
                    self.assertEqual(len(err.strip().splitlines()), 1, err)


class SameJsonTest(ClientTestBase):
    """The Python and the Node.js client print the same JSON (protobuf's canonical mapping with
    the .proto's field names, default values included)."""
    command = []

    @classmethod
    def setUpClass(cls):
        require_node()
        os.environ["ISSUESCOPE_PYTHON_STUBS"] = PYTHON_STUBS
        super().setUpClass()

    def both(self, *args):
        outs = []
        for command in (PythonClientTest.command, NodeClientTest.command):
            type(self).command = command
            outs.append(self.ok(*args))
        return outs

    def test_search_json_is_identical(self):
        py, node = self.both("search", f'"{PHRASE}"', "--json")
        py_hits = [json.loads(l) for l in py.splitlines() if l.strip()]
        node_hits = [json.loads(l) for l in node.splitlines() if l.strip()]
        self.assertEqual(len(py_hits), PLANTED)
        self.assertEqual(py_hits, node_hits)
        self.assertIn("created_at", py_hits[0])
        self.assertIsInstance(py_hits[0]["created_at"], str)

    def test_issue_json_is_identical(self):
        repo, number, _ = self.cluster.planted()[0]
        py, node = self.both("issue", f"github:{repo}", str(number), "--json")
        self.assertEqual(json.loads(py), json.loads(node))


class PythonClientTest(SearchClientTests, ClientTestBase):
    command = [sys.executable, os.path.join(CLIENTS_DIR, "python", "issuescope_client.py")]

    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(os.path.join(PYTHON_STUBS, "issuescope", "v1", "search_pb2_grpc.py")):
            raise RuntimeError(f"generated Python stubs missing in {PYTHON_STUBS!r}: "
                               "build the target issuescope_python_stubs")
        os.environ["ISSUESCOPE_PYTHON_STUBS"] = PYTHON_STUBS
        super().setUpClass()

    def test_missing_stubs_are_reported(self):
        env = {"ISSUESCOPE_PYTHON_STUBS": os.path.join(self.cluster.dir, "nowhere"),
               "PYTHONPATH": ""}
        script = os.path.join(self.cluster.dir, "copy.py")
        shutil.copy(self.command[1], script)  # away from <repo>/build, the fallback location
        p = subprocess.run([sys.executable, script, "search", "x"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=RUN_LIMIT,
                           env=dict(os.environ, **env))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("issuescope_python_stubs", p.stderr)


def node_command(script):
    node = shutil.which("node")
    return [node or "node", os.path.join(NODE_DIR, script)]


def require_node():
    if shutil.which("node") is None:
        raise RuntimeError("node is not installed (Debian package nodejs)")
    if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "@grpc", "grpc-js")):
        raise RuntimeError(f"{NODE_DIR}/node_modules is missing: run `npm ci` there "
                           "(deploy/install-deps.sh does)")


class NodeClientTest(SearchClientTests, ClientTestBase):
    command = node_command("client.js")

    @classmethod
    def setUpClass(cls):
        require_node()
        super().setUpClass()


class ReflectionClientTest(ClientTestBase):
    command = node_command("reflect.js")

    @classmethod
    def setUpClass(cls):
        require_node()
        super().setUpClass()

    def test_lists_services_and_methods(self):
        # No .proto of issuescope is reachable: the client runs from a temporary directory and
        # the proto directory variable points nowhere.
        code, out, err = self.client("list", env={"ISSUESCOPE_PROTO_DIR": "/nonexistent"})
        self.assertEqual(code, 0, err)
        self.assertIn("issuescope.v1.Search  (issuescope/v1/search.proto, 5 methods)", out)
        for line in [
            "rpc Search(issuescope.v1.SearchRequest) returns (issuescope.v1.SearchResponse);",
            "rpc GetIssue(issuescope.v1.SearchGetIssueRequest) returns "
            "(issuescope.v1.IssueWithComments);",
            "rpc Export(issuescope.v1.ExportRequest) returns (stream issuescope.v1.SearchHit);",
            "rpc Aggregate(issuescope.v1.AggregateRequest) returns "
            "(issuescope.v1.AggregateResponse);",
        ]:
            self.assertIn("  " + line, out)
        self.assertIn("grpc.health.v1.Health", out)
        self.assertIn("grpc.reflection.v1alpha.ServerReflection", out)
        # The v1 protocol, which current tools ask first, is served and describes itself.
        self.assertIn("grpc.reflection.v1.ServerReflection  (grpc/reflection/v1/reflection.proto, "
                      "1 methods)", out)

    def test_calls_a_method_like_grpcurl(self):
        """list -> describe -> call: a unary call and a server stream, request and answers as
        protobuf JSON, with no .proto on the client's side."""
        env = {"ISSUESCOPE_PROTO_DIR": "/nonexistent"}
        code, out, err = self.client("call", "issuescope.v1.Search/Search",
                                     json.dumps({"query": f'"{PHRASE}"', "page_size": 2,
                                                 "facets": ["state"]}), env=env)
        self.assertEqual(code, 0, err)
        answer = json.loads(out)
        self.assertEqual(answer["total"], str(PLANTED))  # int64 as a string, as protobuf JSON
        self.assertEqual(len(answer["hits"]), 2)
        self.assertRegex(answer["hits"][0]["created_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(answer["facets"][0]["name"], "state")
        code, out, err = self.client("call", "issuescope.v1.Search/Export",
                                     json.dumps({"query": f'"{PHRASE}"'}), env=env)
        self.assertEqual(code, 0, err)
        self.assertEqual(len(out.splitlines()), PLANTED)
        for args, want_code, want in [
            (("call", "issuescope.v1.Search/Nope", "{}"), 1, "NOT_FOUND"),
            (("call", "issuescope.v1.Search/Search", "{not json"), 2, "not JSON"),
            (("call", "issuescope.v1.Search/Search", '{"page_size": "x"}'), 2, "page_size"),
            (("call", "issuescope.v1.Search/Search", '{"query": "\\"open"}'), 1, "INVALID_ARGUMENT"),
        ]:
            with self.subTest(args=args):
                code, out, err = self.client(*args)
                self.assertEqual(code, want_code, err + out)
                self.assertIn(want, err)

    def test_describes_messages(self):
        out = self.ok("describe", "issuescope.v1.SearchRequest")
        self.assertIn("message issuescope.v1.SearchRequest {", out)
        for field in ["string query = 1;", "int32 page_size = 2;", "repeated string facets = 4;"]:
            self.assertIn("  " + field, out)
        # Types from imported files (model.proto, timestamp.proto) resolve too.
        out = self.ok("describe", "issuescope.v1.SearchHit")
        self.assertIn("  issuescope.v1.IssueState state = 5;", out)
        self.assertIn("  google.protobuf.Timestamp created_at = 8;", out)
        self.assertIn("  issuescope.v1.Tags tags = 15;", out)
        out = self.ok("describe", "issuescope.v1.IssueState")
        self.assertIn("  ISSUE_STATE_OPEN = 1;", out)

    def test_unknown_symbol(self):
        code, out, err = self.client("describe", "issuescope.v1.NoSuchMessage")
        self.assertEqual(code, 1, out)
        self.assertIn("NOT_FOUND", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)


def make_certificates(directory):
    """A throw-away PKI made with the openssl command: ca.pem; server.pem/key for 127.0.0.1;
    client.pem/key signed by the CA; stranger.pem/key signed by another CA. EC P-256, one day."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*argv):
        p = subprocess.run(["openssl", *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, cwd=directory, timeout=RUN_LIMIT)
        if p.returncode != 0:
            raise RuntimeError(f"openssl {' '.join(argv)} failed: {p.stdout}")

    def leaf(name, ca, extensions, serial):
        with open(os.path.join(directory, f"{name}.ext"), "w") as f:
            f.write(extensions + "\n")
        run("req", "-new", *ec, "-subj", f"/CN={name}", "-keyout", f"{name}.key",
            "-out", f"{name}.csr")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-set_serial", str(serial), "-days", "1", "-extfile", f"{name}.ext",
            "-out", f"{name}.pem")

    for ca in ("ca", "other-ca"):
        run("req", "-x509", *ec, "-days", "1", "-subj", f"/CN=issuescope-test-{ca}",
            "-keyout", f"{ca}.key", "-out", f"{ca}.pem")
    leaf("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
         "extendedKeyUsage=serverAuth", 2)
    leaf("client", "ca", "extendedKeyUsage=clientAuth", 3)
    leaf("stranger", "other-ca", "extendedKeyUsage=clientAuth", 4)
    return {name: os.path.join(directory, name) for name in
            ("ca.pem", "client.pem", "client.key", "stranger.pem", "stranger.key",
             "server.pem", "server.key")}


class TlsClientTest(unittest.TestCase):
    """Every example client speaks TLS (and mTLS) to a search service started with --tls-cert,
    --tls-key and --tls-client-ca over the same index; plaintext and clients without a trusted
    certificate are refused with one clear line."""

    @classmethod
    def setUpClass(cls):
        if shutil.which("openssl") is None:
            raise RuntimeError("openssl is not installed (Debian package openssl)")
        require_node()
        os.environ["ISSUESCOPE_PYTHON_STUBS"] = PYTHON_STUBS
        cls.cluster = Cluster()
        cls.certs = make_certificates(cls.cluster.dir)
        cls.tls_search = cls.cluster.spawn("search-tls", [
            "issuescope-search", "--listen=127.0.0.1:0",
            f"--port-file={cls.cluster.dir}/search-tls.port",
            f"--index={cls.cluster.dir}/data/index", f"--tls-cert={cls.certs['server.pem']}",
            f"--tls-key={cls.certs['server.key']}", f"--tls-client-ca={cls.certs['ca.pem']}"])
        port = wait_for_port(f"{cls.cluster.dir}/search-tls.port", cls.tls_search,
                             f"{cls.cluster.dir}/search-tls.log")
        cls.address = f"127.0.0.1:{port}"

    @classmethod
    def tearDownClass(cls):
        stop(cls.tls_search)
        cls.cluster.close(keep=False)

    def clients(self):
        return {"python": PythonClientTest.command, "node": NodeClientTest.command}

    def run_client(self, command, *args):
        p = subprocess.run(list(command) + list(args) + ["--server", self.address],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=RUN_LIMIT, cwd=self.cluster.dir)
        return p.returncode, p.stdout, p.stderr

    def mtls(self, cert="client"):
        return ["--tls-ca", self.certs["ca.pem"], "--tls-cert", self.certs[f"{cert}.pem"],
                "--tls-key", self.certs[f"{cert}.key"]]

    def test_search_over_mutual_tls(self):
        for name, command in self.clients().items():
            with self.subTest(name):
                code, out, err = self.run_client(command, "search", f'"{PHRASE}"', *self.mtls())
                self.assertEqual(code, 0, err)
                self.assertIn(f"{PLANTED} matching issues, {PLANTED} shown", out)

    def test_reflection_over_mutual_tls(self):
        code, out, err = self.run_client(node_command("reflect.js"), "list", *self.mtls())
        self.assertEqual(code, 0, err)
        self.assertIn("issuescope.v1.Search", out)

    def test_refused_without_a_trusted_client_certificate(self):
        cases = [
            ("plaintext", []),
            ("TLS without a client certificate", ["--tls-ca", self.certs["ca.pem"]]),
            ("a certificate of another CA", self.mtls("stranger")),
            ("the system's CAs (the test CA is not one)", ["--tls"]),
        ]
        commands = dict(self.clients(), reflect=node_command("reflect.js"))
        for name, command in commands.items():
            for case, flags in cases:
                with self.subTest(f"{name}: {case}"):
                    args = ["list"] if name == "reflect" else ["search", "x"]
                    code, out, err = self.run_client(command, *args, *flags)
                    self.assertEqual(code, 1, f"{err}{out}")
                    self.assertIn("UNAVAILABLE", err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertEqual(out, "")

    def test_bad_tls_flags_are_named(self):
        missing = os.path.join(self.cluster.dir, "missing.pem")
        not_pem = os.path.join(self.cluster.dir, "search-tls.port")
        cases = [
            ("cert without key", ["--tls-cert", self.certs["client.pem"]], "--tls-key"),
            ("key without cert", ["--tls-key", self.certs["client.key"]], "--tls-cert"),
            ("missing CA file", ["--tls-ca", missing], f"--tls-ca {missing}"),
            ("CA file not PEM", ["--tls-ca", not_pem], "is not a PEM file"),
        ]
        commands = dict(self.clients(), reflect=node_command("reflect.js"))
        for name, command in commands.items():
            for case, flags, message in cases:
                with self.subTest(f"{name}: {case}"):
                    args = ["list"] if name == "reflect" else ["search", "x"]
                    code, out, err = self.run_client(command, *args, *flags)
                    self.assertEqual(code, 2, f"{err}{out}")
                    self.assertIn(message, err)
                    self.assertNotIn("Traceback", err)
                    self.assertNotIn("    at ", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
