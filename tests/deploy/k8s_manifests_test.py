#!/usr/bin/python3
"""Checks the Kubernetes manifests in deploy/k8s and the systemd units in deploy/systemd against
the daemons they run (issue 18).

Manifests drift from the programs they start: a renamed flag, a token variable the secret does
not hold, a probe on a port nobody listens on. This test reads every resource kustomization.yaml
lists and asserts, for every container:

  - its command is one of the built daemons, or a program of a Debian package the deployment
    runs beside them (EXTERNAL: xapian-replicate-server), and every --flag in its arguments is
    a flag that program's --help lists (for the external programs: its options, short or long,
    with their values, and the number of operands its usage line names);
  - every variable a --*-env flag names is provided (secret.example.env, or the container's env);
  - $(VAR) references in args are defined in the container's env;
  - probes are gRPC probes of a daemon's --listen port or TCP probes of the port the replication
    server listens on, and they and Services point at declared container ports;
that every search replica (issuescope-search --replicate-from SERVICE:PORT) reaches, through
that Service, a xapian-replicate-server whose served directory joined with --replicate-index is
the --index of the indexer in its pod, on the same volume, and that this indexer keeps
changesets, and that a NetworkPolicy admits only those replicas to the replication server (it
has no TLS); TLS (issue 18): every gRPC server (SERVERS) serves --tls-cert/--tls-key, the
coordinator and the stores require client certificates, every client of a TLS server (LINKS)
trusts a CA and shows a certificate where the server requires one, no probe is a gRPC probe of a
TLS port (the kubelet's speak plaintext) and an HTTPS probe meets no --tls-client-ca, every TLS
file is a key of the Secret make-tls-secret.sh makes, reached through a read-only mount of it
(items, subPath, subPathExpr with each pod's name), and, with openssl, that the certificates
chain to the CA the other side trusts, name the address each client dials (Services, each
worker's store) as gRPC matches names, name the ids a coordinator with --tls-client-ca binds,
and match their keys; that PodDisruptionBudgets select pods (and leave a replicated workload evictable)
and the Prometheus scrape target is the coordinator's metrics port, that the catalog the
coordinator loads (catalog.toml) is accepted by the real coordinator, and, where kubectl is
installed, that `kubectl kustomize` renders the whole set.
For the systemd units: every daemon has one and every unit runs a daemon or an EXTERNAL program,
every flag of its ExecStart is one its --help lists, every token variable is in
tokens.example.env, every ${VAR} is explained in the unit and comes from an EnvironmentFile,
every search replica copies the indexer's index through the replication server's port, the same
TLS flags as the manifests with every file loaded from /etc/issuescope/tls/ (LoadCredential=,
%d), and `systemd-analyze verify` accepts them (with the programs of this build) where it is
installed.

Run by CTest (label e2e) as /usr/bin/python3 k8s_manifests_test.py with ISSUESCOPE_BIN_DIR and
ISSUESCOPE_SOURCE_DIR set. Without python3-yaml it exits 77 (CTest: skipped), saying so.
"""

import os
import posixpath
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

try:
    import yaml
except ImportError:
    print("k8s_manifests_test: skipped: python3-yaml is not installed", file=sys.stderr)
    sys.exit(77)

BIN_DIR = os.environ.get("ISSUESCOPE_BIN_DIR", "")
SOURCE_DIR = os.environ.get("ISSUESCOPE_SOURCE_DIR", "")
K8S_DIR = os.path.join(SOURCE_DIR, "deploy", "k8s")
SYSTEMD_DIR = os.path.join(SOURCE_DIR, "deploy", "systemd")
DAEMONS = {"issuescope-coordinator", "issuescope-crawler", "issuescope-indexer",
           "issuescope-search"}
# Daemons with a systemd unit but no Kubernetes workload: the shard server of a split index
# (docs/OPERATIONS.md §3), which the manifests do not deploy.
UNIT_ONLY_DAEMONS = {"issuescope-shard-server"}
# Programs of Debian packages the deployment runs beside the daemons, and where they are.
REPLICATE_SERVER = "xapian-replicate-server"  # xapian-tools: serves the index to search replicas
EXTERNAL = {REPLICATE_SERVER: "/usr/bin/xapian-replicate-server"}
# Defaults of the flags the replica checks read (each program's --help).
DEFAULTS = {"--replicate-index": "index", "--replicate-shards": "1", "--shards": "1",
            "--keep-changesets": "0"}


# TLS (docs/SECURITY.md "TLS"). The daemons that serve gRPC, and those of them whose clients
# must show a certificate (--tls-client-ca): every one that supports it but the search service,
# whose users (browsers of its web page, the kubelet's HTTPS probes) have none.
SERVERS = {"issuescope-coordinator", "issuescope-crawler", "issuescope-search"}
CLIENT_CERTIFICATES_REQUIRED = {"issuescope-coordinator", "issuescope-crawler"}
# Who dials whom: client daemon -> (address flag, or STORES: every worker's advertised store;
# server daemon; the client's CA, certificate and key flags for that server).
STORES = "stores"
LINKS = {
    "issuescope-crawler": [("--coordinator", "issuescope-coordinator", "--tls-ca",
                            "--coordinator-tls-cert", "--coordinator-tls-key")],
    "issuescope-indexer": [("--coordinator", "issuescope-coordinator", "--tls-ca", "--tls-cert",
                            "--tls-key"),
                           (STORES, "issuescope-crawler", "--store-tls-ca", "--store-tls-cert",
                            "--store-tls-key")],
}
SERVER_FILES = ("--tls-cert", "--tls-key", "--tls-client-ca", "--http-tls-cert",
                "--http-tls-key")
TLS_FILE_FLAGS = set(SERVER_FILES) | {f for links in LINKS.values() for link in links
                                      for f in link[2:]}
TLS_SECRET = "issuescope-tls"  # the Secret the operator makes with deploy/k8s/make-tls-secret.sh
UNIT_TLS_DIR = "/etc/issuescope/tls/"  # where the systemd units' files are
OPENSSL = shutil.which("openssl")


def openssl(*args):
    return subprocess.run([OPENSSL] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=30)


def certificate_names(path):
    """(common name, DNS subject alternative names) of a PEM certificate."""
    subject = openssl("x509", "-in", path, "-noout", "-subject", "-nameopt", "RFC2253").stdout
    cn = re.search(r"CN=([^,\n]+)", subject)
    san = openssl("x509", "-in", path, "-noout", "-ext", "subjectAltName").stdout
    return (cn.group(1) if cn else None), re.findall(r"DNS:([^,\s]+)", san)


def grpc_name_matches(pattern, host):
    """Whether gRPC (tsi's ssl_transport_security, 1.51) accepts certificate name `pattern` for
    `host`: equal, or *.PARENT where PARENT is host's parent and holds a dot itself (so
    *.issuescope-workers does not cover issuescope-worker-0.issuescope-workers)."""
    pattern, host = pattern.lower().rstrip("."), host.lower().rstrip(".")
    if pattern == host:
        return True
    if not pattern.startswith("*.") or "." not in host:
        return False
    parent = host.split(".", 1)[1]
    return "." in parent and parent == pattern[2:]


def chains_to(cert, ca):
    return openssl("verify", "-CAfile", ca, cert).returncode == 0


def same_public_key(cert, key):
    a = openssl("x509", "-in", cert, "-noout", "-pubkey")
    b = openssl("pkey", "-in", key, "-pubout")
    return a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout


def make_tls_secret(work, workers):
    """{key: file} of the Secret deploy/k8s/make-tls-secret.sh makes for `workers` workers in
    `work`: its keys as `kubectl create secret generic --from-file` reads them where kubectl is
    installed, else the files it wrote."""
    p = subprocess.run(["sh", os.path.join(K8S_DIR, "make-tls-secret.sh"), work, str(workers)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"make-tls-secret.sh failed: {p.stdout}")
    folder = os.path.join(work, "secret")
    keys = sorted(os.listdir(folder))
    kubectl = shutil.which("kubectl")
    if kubectl:
        p = subprocess.run([kubectl, "create", "secret", "generic", TLS_SECRET,
                            f"--from-file={folder}", "--dry-run=client", "-o", "yaml"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError(f"kubectl create secret: {p.stderr}")
        keys = sorted(yaml.safe_load(p.stdout)["data"])
    return {k: os.path.join(folder, k) for k in keys}


def load_resources():
    with open(os.path.join(K8S_DIR, "kustomization.yaml")) as f:
        kustomization = yaml.safe_load(f)
    resources = []
    for name in kustomization["resources"]:
        with open(os.path.join(K8S_DIR, name)) as f:
            resources.extend(r for r in yaml.safe_load_all(f) if r)
    return kustomization, resources


def secret_keys(kustomization):
    keys = set()
    for generator in kustomization.get("secretGenerator", []):
        for env_file in generator.get("envs", []):
            with open(os.path.join(K8S_DIR, env_file)) as f:
                for line in f:
                    line = line.strip()
                    if line and not line.startswith("#") and "=" in line:
                        keys.add(line.split("=", 1)[0])
    return keys


def help_flags(binary):
    out = subprocess.run([os.path.join(BIN_DIR, binary), "--help"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=30).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", out))


def flag_value(argv, flag):
    """The value of the last --flag=VALUE in a daemon's argv, else the flag's default."""
    value = DEFAULTS.get(flag)
    for arg in argv:
        name, eq, v = arg.partition("=")
        if name == flag and eq:
            value = v
    return value


class ExternalProgram:
    """A getopt-style program (EXTERNAL): its options and operands, read from its --help."""

    def __init__(self, name):
        self.name = name
        self.path = EXTERNAL[name]
        self.options = {}  # "-p" and "--port" -> ("--port", takes a value)
        self.operands = 0
        if not os.access(self.path, os.X_OK):
            self.path = None
            return
        out = subprocess.run([self.path, "--help"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=30).stdout
        for short, long, value in re.findall(r"^\s+(?:(-\w),\s+)?(--[a-z][a-z0-9-]*)(=\S+)?",
                                             out, re.M):
            for option in (short, long):
                if option:
                    self.options[option] = (long, bool(value))
        usage = re.search(r"^Usage: \S+ (.*)$", out, re.M)
        if usage:  # operands are the words of the usage line that are not [optional]
            self.operands = len([w for w in usage.group(1).split() if not w.startswith("[")])

    def parse(self, argv):
        """(values by long option, operands); ValueError naming what is wrong."""
        values, operands = {}, []
        i = 0
        while i < len(argv):
            arg = argv[i]
            i += 1
            if not arg.startswith("-") or arg == "-":
                operands.append(arg)
                continue
            option, eq, value = arg.partition("=")
            if not arg.startswith("--") and len(option) > 2:  # -p7010
                option, eq, value = arg[:2], "=", arg[2:]
            if option not in self.options:
                raise ValueError(f"{self.name} has no option {option}")
            long, takes_value = self.options[option]
            if takes_value and not eq:
                if i == len(argv):
                    raise ValueError(f"{self.name} {option} needs a value")
                value = argv[i]
                i += 1
            elif eq and not takes_value:
                raise ValueError(f"{self.name} {option} takes no value")
            values[long] = value if takes_value else True
        if len(operands) != self.operands:
            raise ValueError(f"{self.name} takes {self.operands} operand(s), given {operands}")
        return values, operands


def volume_location(container, path):
    """(volume, path inside it) of an absolute path in a container, or None off its volumes."""
    path = posixpath.normpath(path)
    best = None
    for m in container.get("volumeMounts", []):
        mount = posixpath.normpath(m["mountPath"])
        if path == mount or path.startswith(mount.rstrip("/") + "/"):
            if best is None or len(mount) > len(posixpath.normpath(best["mountPath"])):
                best = m
    if best is None:
        return None
    inside = posixpath.relpath(path, posixpath.normpath(best["mountPath"]))
    return best["name"], posixpath.normpath(posixpath.join(best.get("subPath", ""), inside))


def check_server_tls(test, argv, daemon, label):
    """A gRPC server's command line serves TLS, and asks for client certificates where the
    daemon requires them."""
    for flag in ("--tls-cert", "--tls-key"):
        test.assertTrue(flag_value(argv, flag), f"{label} without {flag}")
    if daemon in CLIENT_CERTIFICATES_REQUIRED:
        test.assertTrue(flag_value(argv, "--tls-client-ca"),
                        f"{label} does not require client certificates")


def check_client_tls(test, argv, server_argv, server, flags):
    """A client's command line uses TLS towards a server that serves it, and presents a
    certificate to one that requires it; `flags` are the client's (CA, cert, key) flags."""
    ca, cert, key = flags
    if flag_value(server_argv, "--tls-cert"):
        test.assertTrue(flag_value(argv, ca), f"{server} serves TLS: no {ca}")
    if flag_value(server_argv, "--tls-client-ca"):
        for flag in (cert, key):
            test.assertTrue(flag_value(argv, flag),
                            f"{server} requires a client certificate: no {flag}")


class ManifestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kustomization, cls.resources = load_resources()
        cls.secrets = secret_keys(cls.kustomization)
        cls.pods = []  # (workload name, pod spec, pod labels)
        cls.replicas = {}  # workload name -> replicas
        cls.kinds = {}  # workload name -> StatefulSet or Deployment
        for r in cls.resources:
            if r["kind"] in ("StatefulSet", "Deployment"):
                template = r["spec"]["template"]
                cls.pods.append((r["metadata"]["name"], template["spec"],
                                 template["metadata"].get("labels", {})))
                cls.replicas[r["metadata"]["name"]] = r["spec"].get("replicas", 1)
                cls.kinds[r["metadata"]["name"]] = r["kind"]
        cls.external = {name: ExternalProgram(name) for name in EXTERNAL}
        # The TLS Secret as the operator makes it (README.md "TLS"), for as many workers as the
        # manifests run; None without openssl.
        cls.tls_work = tempfile.mkdtemp(prefix="issuescope-tls-")
        cls.tls_files = None
        if OPENSSL:
            workers = [w for w, spec, _ in cls.pods
                       if spec["containers"][0]["command"][0] == "issuescope-crawler"]
            cls.tls_files = make_tls_secret(cls.tls_work, sum(cls.replicas[w] for w in workers))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tls_work, ignore_errors=True)

    def containers(self):
        for workload, spec, _ in self.pods:
            for c in spec["containers"]:
                yield workload, c

    @staticmethod
    def argv(c):
        return c["command"][1:] + c.get("args", [])

    def selected_pods(self, selector):
        return [(w, spec) for w, spec, labels in self.pods
                if all(labels.get(k) == v for k, v in selector.items())]

    def pod_names(self, workload):
        """The names of a workload's pods: a StatefulSet's NAME-0…; None for a Deployment's."""
        if self.kinds[workload] == "StatefulSet":
            return [f"{workload}-{i}" for i in range(self.replicas[workload])]
        return [None]

    def expand(self, text, c, pod):
        """`text` with the $(VAR)s of container c's env: the pod's name for metadata.name."""
        env = {}
        for e in c.get("env", []):
            if e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name":
                env[e["name"]] = pod
            elif "value" in e:
                env[e["name"]] = e["value"]

        def value(m):
            v = env.get(m.group(1))
            self.assertIsNotNone(v, f"{c['name']}: $({m.group(1)}) has no value in {text}")
            return v
        return re.sub(r"\$\((\w+)\)", value, text)

    def server_containers(self, host, daemon):
        """The (workload, pod spec, container) running `daemon` that HOST (a Service name, its
        first label) reaches."""
        services = {r["metadata"]["name"]: r for r in self.resources if r["kind"] == "Service"}
        service = services.get(host.split(".")[0])
        self.assertIsNotNone(service, f"no Service {host}")
        return [(w, spec, c) for w, spec in self.selected_pods(service["spec"]["selector"])
                for c in spec["containers"] if c["command"][0] == daemon]

    def links(self):
        """Every gRPC link: (client workload, pod spec, container, address flag, server workload,
        pod spec, container, the client's CA, certificate and key flags)."""
        for workload, spec, _ in self.pods:
            for c in spec["containers"]:
                for address, daemon, ca, cert, key in LINKS.get(c["command"][0], []):
                    if address == STORES:
                        servers = self.containers_running(daemon)
                    else:
                        target = flag_value(self.argv(c), address)
                        if not target:
                            continue
                        servers = self.server_containers(target.rpartition(":")[0], daemon)
                        self.assertTrue(servers, f"{workload}/{c['name']} {address}={target} "
                                        f"reaches no {daemon}")
                    for server in servers:
                        yield (workload, spec, c, address) + server + (ca, cert, key)

    def containers_running(self, daemon):
        return [(w, spec, c) for w, spec, _ in self.pods for c in spec["containers"]
                if c["command"][0] == daemon]

    def secret_key(self, spec, c, path, pod):
        """The key of the Secret `path` is in container c (of the pod named `pod`), as the mounts
        and the volume's items make it; fails when it is on no Secret's volume."""
        path = posixpath.normpath(path)
        mounts = [m for m in c.get("volumeMounts", [])
                  if path == posixpath.normpath(m["mountPath"])
                  or path.startswith(posixpath.normpath(m["mountPath"]).rstrip("/") + "/")]
        self.assertTrue(mounts, f"{c['name']}: {path} is on no volume")
        mount = max(mounts, key=lambda m: len(posixpath.normpath(m["mountPath"])))
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        volume = volumes.get(mount["name"], {})
        self.assertIn("secret", volume, f"{c['name']}: {path} is not on a Secret's volume")
        self.assertEqual(volume["secret"]["secretName"], TLS_SECRET, f"{c['name']}: {path}")
        self.assertTrue(mount.get("readOnly"), f"{c['name']}: {mount['mountPath']} not readOnly")
        inside = posixpath.relpath(path, posixpath.normpath(mount["mountPath"]))
        sub = mount.get("subPath") or self.expand(mount.get("subPathExpr", ""), c, pod)
        inside = posixpath.normpath(posixpath.join(sub, inside))
        items = volume["secret"].get("items")
        if items is None:
            return inside
        by_path = {posixpath.normpath(i["path"]): i["key"] for i in items}
        self.assertIn(inside, by_path, f"{c['name']}: {path} is not among the items of volume "
                      f"{volume['name']}")
        return by_path[inside]

    def tls_file(self, workload, spec, c, flag, pod):
        """The file the Secret made by make-tls-secret.sh holds at `flag` of container c, or None
        when the flag is not given; skips without openssl."""
        value = flag_value(self.argv(c), flag)
        if not value:
            return None
        if self.tls_files is None:
            self.skipTest("openssl is not installed: the certificates are not checked")
        key = self.secret_key(spec, c, value, pod)
        self.assertIn(key, self.tls_files, f"{workload}/{c['name']} {flag}={value}: key {key}")
        return self.tls_files[key]

    def external_values(self, c):
        """(values, operands) of an EXTERNAL container's arguments; skips if not installed."""
        program = self.external[c["command"][0]]
        if program.path is None:
            self.skipTest(f"{EXTERNAL[program.name]} is not installed: its flags not checked")
        try:
            return program.parse(self.argv(c))
        except ValueError as e:
            error = f"{c['name']}: {e}"
        self.fail(error)

    def listen_port(self, c):
        """The port a container's gRPC (daemon) or TCP (external) server listens on, or None."""
        if c["command"][0] in DAEMONS:
            listen = flag_value(self.argv(c), "--listen")
            return int(listen.rpartition(":")[2]) if listen else None
        values, _ = self.external_values(c)
        return int(values["--port"]) if "--port" in values else None

    def test_every_daemon_runs_somewhere(self):
        commands = {c["command"][0] for _, c in self.containers()}
        self.assertEqual(commands - set(EXTERNAL), DAEMONS,
                         "every daemon runs, and nothing but the daemons and EXTERNAL programs")

    def test_flags_exist_and_variables_are_provided(self):
        flags_of = {}
        for workload, c in self.containers():
            binary = c["command"][0]
            env_names = {e["name"] for e in c.get("env", [])}
            if binary in EXTERNAL:
                with self.subTest(f"{workload}/{c['name']} {binary}"):
                    self.external_values(c)  # fails on an unknown option or operand count
                    for arg in self.argv(c):
                        for var in re.findall(r"\$\((\w+)\)", arg):
                            self.assertIn(var, env_names,
                                          f"$({var}) is not in the env of {c['name']}")
                continue
            self.assertIn(binary, DAEMONS, f"{workload}/{c['name']}")
            self.assertTrue(os.access(os.path.join(BIN_DIR, binary), os.X_OK),
                            f"{binary} not built in {BIN_DIR}")
            if binary not in flags_of:
                flags_of[binary] = help_flags(binary)
            from_secret = any("secretRef" in e for e in c.get("envFrom", []))
            for arg in self.argv(c):
                flag, _, value = arg.partition("=")
                with self.subTest(f"{workload}/{c['name']} {flag}"):
                    self.assertIn(flag, flags_of[binary], f"{binary} has no flag {flag}")
                    for var in re.findall(r"\$\((\w+)\)", value):
                        self.assertIn(var, env_names, f"$({var}) is not in the env of {c['name']}")
                    if flag.endswith("-env"):
                        for spec in value.split(","):
                            var = spec.split("=", 1)[-1]
                            provided = var in env_names or (from_secret and var in self.secrets)
                            self.assertTrue(provided, f"{flag}={value}: nothing sets {var}")

    def test_probes_and_services_use_declared_ports(self):
        for workload, c in self.containers():
            numbers = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
            argv = self.argv(c)
            tls = c["command"][0] in DAEMONS and bool(flag_value(argv, "--tls-cert"))
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                if probe not in c:
                    continue
                with self.subTest(f"{workload}/{c['name']} {probe}"):
                    kinds = [k for k in ("grpc", "tcpSocket", "httpGet", "exec") if k in c[probe]]
                    self.assertEqual(len(kinds), 1)
                    kind = kinds[0]
                    port = c[probe][kind]["port"]
                    port = numbers.get(port, port)  # a probe may name the port
                    self.assertIn(port, numbers.values(), "not a declared container port")
                    if c["command"][0] not in DAEMONS:
                        # The replication server speaks its own protocol: a TCP probe.
                        self.assertEqual(kind, "tcpSocket")
                        self.assertEqual(port, self.listen_port(c), "not the port it listens on")
                    elif kind == "httpGet":
                        # The HTTP listener (HTTPS with --tls-cert); the kubelet's HTTPS probes
                        # show no client certificate, so the server must not require one.
                        http = flag_value(argv, "--http-listen")
                        self.assertTrue(http, "an HTTP probe of a daemon without --http-listen")
                        self.assertEqual(port, int(http.rpartition(":")[2]))
                        self.assertEqual(c[probe]["httpGet"].get("scheme", "HTTP"),
                                         "HTTPS" if tls else "HTTP")
                        self.assertIn(c[probe]["httpGet"]["path"], ("/healthz", "/v1/status"))
                        self.assertIsNone(flag_value(argv, "--tls-client-ca"),
                                          "the kubelet's HTTPS probe has no client certificate")
                    else:
                        # The kubelet's gRPC probes speak plaintext: never of a TLS port.
                        self.assertEqual(kind, "tcpSocket" if tls else "grpc",
                                         "a gRPC probe of a TLS port never passes" if tls else "")
                        self.assertEqual(port, self.listen_port(c), "not the port it listens on")
            if c["command"][0] == "issuescope-search" and flag_value(argv, "--replicate-from"):
                with self.subTest(f"{workload}/{c['name']} probes wait for the first copy"):
                    # Readiness waits for the first full copy (gRPC health NOT_SERVING, or
                    # /v1/status 503); a liveness probe that also waits needs a startup probe.
                    def waits(probe):
                        return "grpc" in probe or probe.get("httpGet", {}).get("path") == \
                            "/v1/status"
                    self.assertTrue(waits(c.get("readinessProbe", {})),
                                    "readiness does not wait for the replica's first copy")
                    if waits(c.get("livenessProbe", {})):
                        self.assertIn("startupProbe", c, "liveness would restart a copying replica")
        for r in self.resources:
            if r["kind"] != "Service":
                continue
            pods = [spec for _, spec in self.selected_pods(r["spec"]["selector"])]
            self.assertEqual(len(pods), 1, f"service {r['metadata']['name']} selects no pod")
            names = {p["name"] for c in pods[0]["containers"] for p in c.get("ports", [])}
            for port in r["spec"]["ports"]:
                self.assertIn(port["targetPort"], names, f"service {r['metadata']['name']}")

    def test_search_replicas_copy_the_index_the_indexer_writes(self):
        replicas = [(w, spec, c) for w, spec, _ in self.pods for c in spec["containers"]
                    if c["command"][0] == "issuescope-search"
                    and flag_value(self.argv(c), "--replicate-from")]
        self.assertTrue(replicas, "no search container has --replicate-from")
        services = {r["metadata"]["name"]: r for r in self.resources if r["kind"] == "Service"}
        for workload, spec, c in replicas:
            with self.subTest(f"{workload}/{c['name']}"):
                args = self.argv(c)
                host, _, port = flag_value(args, "--replicate-from").rpartition(":")
                # SERVICE, SERVICE.NAMESPACE or SERVICE.NAMESPACE.svc.…: the first label.
                service = services.get(host.split(".")[0])
                self.assertIsNotNone(service, f"--replicate-from: no Service {host}")
                ports = [p for p in service["spec"]["ports"] if p["port"] == int(port)]
                self.assertEqual(len(ports), 1, f"Service {host} has no port {port}")
                target = ports[0].get("targetPort", ports[0]["port"])
                pods = self.selected_pods(service["spec"]["selector"])
                self.assertEqual(len(pods), 1, f"Service {host} selects {[w for w, _ in pods]}")
                index_pod, index_spec = pods[0]
                servers = []
                for s in index_spec["containers"]:
                    if s["command"][0] != REPLICATE_SERVER:
                        continue
                    declared = [p["containerPort"] for p in s.get("ports", [])
                                if target in (p.get("name"), p["containerPort"])]
                    if declared and declared[0] == self.listen_port(s):
                        servers.append(s)
                self.assertEqual(len(servers), 1, f"{index_pod}: no {REPLICATE_SERVER} listening "
                                 f"on targetPort {target} of Service {host}")
                server = servers[0]
                values, operands = self.external_values(server)
                self.assertNotIn(values.get("--interface"), ("127.0.0.1", "localhost", "::1"),
                                 f"{index_pod}/{server['name']} listens on loopback only")
                indexers = [x for x in index_spec["containers"]
                            if x["command"][0] == "issuescope-indexer"]
                self.assertEqual(len(indexers), 1, f"{index_pod}: no indexer beside the server")
                indexer_args = self.argv(indexers[0])
                index = flag_value(indexer_args, "--index")
                served = posixpath.join(operands[0], flag_value(args, "--replicate-index"))
                self.assertEqual(posixpath.normpath(served), posixpath.normpath(index),
                                 "the served directory joined with --replicate-index is not the "
                                 "indexer's --index")
                # And the two containers see the same files there: the same volume.
                where = volume_location(indexers[0], index)
                self.assertIsNotNone(where, f"{index_pod}: the indexer's --index is on no volume")
                self.assertEqual(volume_location(server, served), where,
                                 f"{index_pod}/{server['name']} does not mount the index volume")
                self.assertGreater(int(flag_value(indexer_args, "--keep-changesets")), 0,
                                   f"{index_pod}: the indexer keeps no changesets (every round "
                                   "would copy the whole index)")
                self.assertEqual(flag_value(args, "--replicate-shards"),
                                 flag_value(indexer_args, "--shards"))
                # The copy goes on a volume of the search pod, not the container's own layer.
                self.assertIsNotNone(volume_location(c, flag_value(args, "--index")),
                                     f"{workload}: --index is on no volume")

    def test_worker_store_addresses_resolve_through_the_headless_service(self):
        workers = [r for r in self.resources if r["kind"] == "StatefulSet"
                   and r["spec"]["template"]["spec"]["containers"][0]["command"][0]
                   == "issuescope-crawler"]
        self.assertEqual(len(workers), 1)
        service = workers[0]["spec"]["serviceName"]
        headless = [r for r in self.resources if r["kind"] == "Service"
                    and r["metadata"]["name"] == service]
        self.assertEqual(len(headless), 1)
        self.assertEqual(headless[0]["spec"].get("clusterIP"), "None")
        args = workers[0]["spec"]["template"]["spec"]["containers"][0]["args"]
        self.assertIn(f"--advertise-address=$(POD_NAME).{service}:50052", args)

    def test_tls_flags_exist(self):
        # The TLS checks below read these flags: a renamed one would make them vacuous.
        for daemon in SERVERS:
            self.assertLessEqual({"--tls-cert", "--tls-key", "--tls-client-ca"},
                                 help_flags(daemon), daemon)
        for daemon, links in LINKS.items():
            flags = help_flags(daemon)
            for address, _, *tls in links:
                self.assertLessEqual(set(tls) | ({address} - {STORES}), flags, daemon)

    def test_grpc_servers_serve_tls(self):
        for daemon in SERVERS:
            running = self.containers_running(daemon)
            self.assertTrue(running, daemon)
            for workload, _, c in running:
                with self.subTest(f"{workload}/{c['name']}"):
                    check_server_tls(self, self.argv(c), daemon, daemon)

    def test_every_client_of_a_tls_server_uses_tls(self):
        links = list(self.links())
        self.assertEqual({l[2]["command"][0] for l in links}, set(LINKS))
        for (workload, _, c, address, server_workload, _, server, ca, cert, key) in links:
            with self.subTest(f"{workload}/{c['name']} {address} -> {server_workload}"):
                argv, server_argv = self.argv(c), self.argv(server)
                check_client_tls(self, argv, server_argv, server_workload, (ca, cert, key))

    def test_tls_files_are_keys_of_the_mounted_secret(self):
        used = 0
        for workload, spec, _ in self.pods:
            for c in spec["containers"]:
                if c["command"][0] not in DAEMONS:
                    continue
                for arg in self.argv(c):
                    flag, _, value = arg.partition("=")
                    if flag not in TLS_FILE_FLAGS:
                        continue
                    for pod in self.pod_names(workload):
                        with self.subTest(f"{pod or workload}/{c['name']} {flag}"):
                            key = self.secret_key(spec, c, value, pod)
                            used += 1
                            if self.tls_files is not None:
                                self.assertIn(key, self.tls_files,
                                              f"{value}: the Secret has no key {key}")
            for volume in spec.get("volumes", []):
                if volume.get("secret", {}).get("secretName") == TLS_SECRET and self.tls_files:
                    for item in volume["secret"].get("items", []):
                        self.assertIn(item["key"], self.tls_files,
                                      f"{workload}: volume {volume['name']}: no key {item['key']}")
        self.assertGreater(used, 0, "no TLS file is named")

    def test_certificates_fit_the_links(self):
        for (workload, spec, c, address, server_workload, server_spec, server, ca, cert,
             key) in self.links():
            for pod in self.pod_names(workload):
                for server_pod in self.pod_names(server_workload):
                    with self.subTest(f"{pod or workload} {address} -> "
                                      f"{server_pod or server_workload}"):
                        self.check_link(workload, spec, c, pod, address, server_workload,
                                        server_spec, server, server_pod, ca, cert, key)

    def check_link(self, workload, spec, c, pod, address, server_workload, server_spec, server,
                   server_pod, ca, cert, key):
        server_cert = self.tls_file(server_workload, server_spec, server, "--tls-cert", server_pod)
        if server_cert is None:
            return  # plaintext: test_grpc_servers_serve_tls says so
        server_key = self.tls_file(server_workload, server_spec, server, "--tls-key", server_pod)
        self.assertTrue(same_public_key(server_cert, server_key), "the server's key is not its")
        ca_file = self.tls_file(workload, spec, c, ca, pod)
        self.assertIsNotNone(ca_file, f"no {ca}")
        self.assertTrue(chains_to(server_cert, ca_file),
                        f"the server's certificate does not chain to the client's {ca}")
        # The name the client dials, which gRPC checks against the certificate.
        if address == STORES:
            dialed = flag_value(self.argv(server), "--advertise-address")
            self.assertTrue(dialed, f"{server_workload}: no --advertise-address")
            dialed = self.expand(dialed, server, server_pod)
        else:
            dialed = self.expand(flag_value(self.argv(c), address), c, pod)
        host = dialed.rpartition(":")[0]
        cn, dns = certificate_names(server_cert)
        self.assertTrue(any(grpc_name_matches(n, host) for n in (dns or [cn])),
                        f"the server's certificate names {dns or [cn]}, not {host}")
        client_ca = self.tls_file(server_workload, server_spec, server, "--tls-client-ca",
                                  server_pod)
        if client_ca is None:
            return
        client_cert = self.tls_file(workload, spec, c, cert, pod)
        client_key = self.tls_file(workload, spec, c, key, pod)
        self.assertIsNotNone(client_cert, f"no {cert}")
        self.assertIsNotNone(client_key, f"no {key}")
        self.assertTrue(same_public_key(client_cert, client_key), f"{key} is not {cert}'s key")
        self.assertTrue(chains_to(client_cert, client_ca),
                        f"{cert} does not chain to the server's --tls-client-ca")
        if server["command"][0] == "issuescope-coordinator":
            # coordinator/security.h: a worker's (or the indexer's) calls only under an id its
            # certificate names, as common name or subject alternative name, exactly.
            client_id = self.expand(flag_value(self.argv(c), "--id") or "indexer", c, pod)
            cn, dns = certificate_names(client_cert)
            self.assertIn(client_id, [cn] + dns, f"{cert} does not name --id {client_id}")

    def test_certificates_name_the_services_clients_dial(self):
        for r in self.resources:
            if r["kind"] != "Service":
                continue
            service = r["metadata"]["name"]
            for workload, spec in self.selected_pods(r["spec"]["selector"]):
                for c in spec["containers"]:
                    if c["command"][0] not in SERVERS or not flag_value(self.argv(c), "--tls-cert"):
                        continue
                    ports = {p["name"] for p in c.get("ports", [])}
                    if not any(p["targetPort"] in ports for p in r["spec"]["ports"]):
                        continue
                    # A StatefulSet's headless Service names each pod: POD.SERVICE.
                    per_pod = (self.kinds[workload] == "StatefulSet"
                               and r["spec"].get("clusterIP") == "None"
                               and any(x["metadata"]["name"] == workload
                                       and x["spec"].get("serviceName") == service
                                       for x in self.resources))
                    for pod in self.pod_names(workload):
                        with self.subTest(f"Service {service} -> {pod or workload}"):
                            cert = self.tls_file(workload, spec, c, "--tls-cert", pod)
                            host = f"{pod}.{service}" if per_pod else service
                            cn, dns = certificate_names(cert)
                            self.assertTrue(any(grpc_name_matches(n, host) for n in (dns or [cn])),
                                            f"the certificate names {dns or [cn]}, not {host}")

    def test_replication_port_admits_only_the_search_replicas(self):
        # xapian-replicate-server has no TLS: a NetworkPolicy keeps its port to the replicas.
        policies = [r for r in self.resources if r["kind"] == "NetworkPolicy"]
        services = [r for r in self.resources if r["kind"] == "Service"]
        checked = 0
        for service in services:
            for workload, spec in self.selected_pods(service["spec"]["selector"]):
                labels = [l for w, _, l in self.pods if w == workload][0]
                for c in spec["containers"]:
                    if c["command"][0] != REPLICATE_SERVER:
                        continue
                    port = self.listen_port(c)
                    port_names = {p["name"] for p in c.get("ports", [])
                                  if p["containerPort"] == port}
                    name = service["metadata"]["name"]
                    replicas = {w for w, _, x in self.containers_running("issuescope-search")
                                if (flag_value(self.argv(x), "--replicate-from") or "")
                                .split(".")[0].split(":")[0] == name}
                    selecting = [p for p in policies if all(
                        labels.get(k) == v
                        for k, v in p["spec"]["podSelector"].get("matchLabels", {}).items())]
                    checked += 1
                    with self.subTest(f"{workload}/{c['name']} port {port}"):
                        ingress = [p for p in selecting
                                   if "Ingress" in p["spec"].get("policyTypes", ["Ingress"])]
                        self.assertTrue(ingress, f"no NetworkPolicy restricts {workload}")
                        admitted = set()
                        for p in ingress:
                            for rule in p["spec"].get("ingress", []):
                                peers = rule.get("from", [])
                                self.assertTrue(peers, f"{p['metadata']['name']}: open to all")
                                for peer in peers:
                                    self.assertEqual(list(peer), ["podSelector"],
                                                     f"{p['metadata']['name']}: {peer}")
                                    selector = peer["podSelector"].get("matchLabels", {})
                                    self.assertTrue(selector, "an empty podSelector admits all")
                                    pods = {w for w, _ in self.selected_pods(selector)}
                                    self.assertLessEqual(pods, replicas,
                                                         f"{p['metadata']['name']} admits {pods}")
                                    admitted |= pods
                                for rule_port in rule.get("ports", [None]):
                                    self.assertIsNotNone(rule_port, "a rule for every port")
                                    self.assertIn(rule_port["port"], {port} | port_names)
                        self.assertEqual(admitted, replicas, "every search replica is admitted")
        self.assertGreater(checked, 0, f"no Service reaches {REPLICATE_SERVER}")

    def test_the_coordinator_accepts_the_catalog(self):
        work = tempfile.mkdtemp(prefix="issuescope-k8s-")
        try:
            port_file = os.path.join(work, "port")
            proc = subprocess.Popen(
                [os.path.join(BIN_DIR, "issuescope-coordinator"), "--listen=127.0.0.1:0",
                 f"--data={work}/data", f"--config={K8S_DIR}/catalog.toml", "--insecure-admin",
                 f"--port-file={port_file}"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            deadline = time.monotonic() + 30
            while not os.path.exists(port_file) and proc.poll() is None:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            running = proc.poll() is None
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=30)
            self.assertTrue(running, f"the coordinator refused catalog.toml: {out}")
            self.assertIn("1 repositories added", out)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def test_disruption_budgets_select_pods(self):
        budgets = [r for r in self.resources if r["kind"] == "PodDisruptionBudget"]
        self.assertEqual(len(budgets), 4)
        for b in budgets:
            pods = [w for w, _ in self.selected_pods(b["spec"]["selector"]["matchLabels"])]
            self.assertEqual(len(pods), 1, f"budget {b['metadata']['name']} selects {pods}")
            # A replicated workload stays drainable: the budget lets one pod go.
            replicas = self.replicas[pods[0]]
            if replicas > 1 and "minAvailable" in b["spec"]:
                self.assertLess(b["spec"]["minAvailable"], replicas, b["metadata"]["name"])

    def test_prometheus_scrapes_the_coordinators_metrics_port(self):
        maps = [r for r in self.resources if r["kind"] == "ConfigMap"
                and r["metadata"]["name"] == "issuescope-prometheus"]
        self.assertEqual(len(maps), 1)
        config = yaml.safe_load(maps[0]["data"]["scrape-issuescope.yaml"])
        targets = [t for job in config["scrape_configs"] for sc in job["static_configs"]
                   for t in sc["targets"]]
        self.assertEqual(targets, ["issuescope-coordinator:9090"])
        job = config["scrape_configs"][0]
        coordinator = self.containers_running("issuescope-coordinator")[0][2]
        if flag_value(self.argv(coordinator), "--tls-cert"):  # metrics over HTTPS
            self.assertEqual(job.get("scheme"), "https")
            self.assertIn("ca_file", job.get("tls_config", {}))
        if flag_value(self.argv(coordinator), "--tls-client-ca"):  # and a client certificate
            self.assertLessEqual({"cert_file", "key_file"}, set(job.get("tls_config", {})))
        service = [r for r in self.resources if r["kind"] == "Service"
                   and r["metadata"]["name"] == "issuescope-coordinator"][0]
        self.assertIn(9090, [p["port"] for p in service["spec"]["ports"]])
        for workload, c in self.containers():
            if c["command"][0] == "issuescope-coordinator":
                self.assertIn("--metrics-listen=0.0.0.0:9090", c["args"])

    def test_resource_requests_are_set(self):
        for workload, c in self.containers():
            requests = c.get("resources", {}).get("requests", {})
            self.assertIn("memory", requests, f"{workload}/{c['name']}")
            self.assertIn("cpu", requests, f"{workload}/{c['name']}")

    def test_kubectl_renders_the_set(self):
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            self.skipTest("kubectl is not installed: rendering not checked")
        p = subprocess.run([kubectl, "kustomize", K8S_DIR], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        kinds = sorted(r["kind"] for r in yaml.safe_load_all(p.stdout) if r)
        self.assertEqual(kinds, ["ConfigMap", "ConfigMap", "Deployment", "NetworkPolicy",
                                 "PodDisruptionBudget",
                                 "PodDisruptionBudget", "PodDisruptionBudget",
                                 "PodDisruptionBudget", "Secret", "Service", "Service", "Service",
                                 "Service", "Service", "StatefulSet", "StatefulSet",
                                 "StatefulSet"])


def load_units():
    units = {}
    for name in sorted(os.listdir(SYSTEMD_DIR)):
        if name.endswith(".service"):
            with open(os.path.join(SYSTEMD_DIR, name)) as f:
                units[name] = f.read()
    return units


class SystemdUnitTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.units = load_units()
        cls.tokens = set()
        with open(os.path.join(SYSTEMD_DIR, "tokens.example.env")) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    cls.tokens.add(line.split("=", 1)[0])

        cls.external = {name: ExternalProgram(name) for name in EXTERNAL}

    def exec_start(self, text):
        lines = [l for l in text.splitlines() if l.startswith("ExecStart=")]
        self.assertEqual(len(lines), 1)
        return lines[0][len("ExecStart="):].split()

    @staticmethod
    def setting(text, key):
        return [l.split("=", 1)[1] for l in text.splitlines() if l.startswith(key + "=")]

    def external_values(self, argv):
        program = self.external[os.path.basename(argv[0])]
        if program.path is None:
            self.skipTest(f"{EXTERNAL[program.name]} is not installed: its flags not checked")
        try:
            return program.parse(argv[1:])
        except ValueError as e:
            error = str(e)
        self.fail(error)

    def units_running(self, binary):
        return [(n, t) for n, t in self.units.items()
                if os.path.basename(self.exec_start(t)[0]) == binary]

    def test_every_daemon_has_a_unit(self):
        binaries = {os.path.basename(self.exec_start(t)[0]) for t in self.units.values()}
        self.assertEqual(binaries - set(EXTERNAL), DAEMONS | UNIT_ONLY_DAEMONS,
                         "every daemon has a unit, and units run nothing but the daemons and "
                         "EXTERNAL programs")

    def test_flags_exist_and_variables_are_provided(self):
        for name, text in self.units.items():
            argv = self.exec_start(text)
            binary = os.path.basename(argv[0])
            comments = "\n".join(l for l in text.splitlines() if l.startswith("#"))
            variables = re.findall(r"\$\{(\w+)\}", " ".join(argv))
            if variables:
                self.assertTrue(self.setting(text, "EnvironmentFile"),
                                f"{name}: nothing sets {variables}")
            for var in variables:
                self.assertIn(var, comments, f"{name}: ${{{var}}} is not explained")
            if binary in EXTERNAL:
                with self.subTest(f"{name} {binary}"):
                    self.assertEqual(argv[0], EXTERNAL[binary], f"{name}: not Debian's {binary}")
                    self.external_values(argv)  # fails on an unknown option or operand count
                continue
            self.assertIn(binary, DAEMONS | UNIT_ONLY_DAEMONS,
                          f"{name} runs neither a daemon nor an EXTERNAL program")
            flags = help_flags(binary)
            for arg in argv[1:]:
                flag, _, value = arg.partition("=")
                with self.subTest(f"{name} {flag}"):
                    self.assertIn(flag, flags, f"{binary} has no flag {flag}")
                    if flag.endswith("-env"):
                        self.assertIn(value, self.tokens, f"{name} {flag}: not in tokens.example.env")
                        self.assertIn("EnvironmentFile=/etc/issuescope/tokens.env", text)

    def test_search_replicas_copy_the_index_the_indexer_writes(self):
        replicas = [(n, self.exec_start(t), t) for n, t in self.units_running("issuescope-search")
                    if flag_value(self.exec_start(t), "--replicate-from")]
        self.assertTrue(replicas, "no search unit has --replicate-from")
        servers = self.units_running(REPLICATE_SERVER)
        self.assertEqual(len(servers), 1, f"one {REPLICATE_SERVER} unit, for the index host")
        server_name, server_text = servers[0]
        values, operands = self.external_values(self.exec_start(server_text))
        self.assertNotIn(values.get("--interface"), ("127.0.0.1", "localhost", "::1"),
                         f"{server_name} listens on loopback only")
        indexers = self.units_running("issuescope-indexer")
        self.assertEqual(len(indexers), 1)
        indexer_name, indexer_text = indexers[0]
        indexer_args = self.exec_start(indexer_text)
        index = flag_value(indexer_args, "--index")
        self.assertIn(indexer_name, " ".join(self.setting(server_text, "After")),
                      f"{server_name} does not start after the indexer")
        self.assertGreater(int(flag_value(indexer_args, "--keep-changesets")), 0,
                           f"{indexer_name} keeps no changesets")
        for name, argv, text in replicas:
            with self.subTest(name):
                # The index host is another host (a variable); its port is the server's.
                port = flag_value(argv, "--replicate-from").rpartition(":")[2]
                self.assertEqual(port, values.get("--port"), f"{name}: not {server_name}'s port")
                served = posixpath.join(operands[0], flag_value(argv, "--replicate-index"))
                self.assertEqual(posixpath.normpath(served), posixpath.normpath(index),
                                 f"{name}: {server_name}'s directory joined with "
                                 "--replicate-index is not the indexer's --index")
                self.assertEqual(flag_value(argv, "--replicate-shards"),
                                 flag_value(indexer_args, "--shards"))
                # ProtectSystem=strict: the copy must go in the unit's own state directory.
                state = ["/var/lib/" + d for d in self.setting(text, "StateDirectory")]
                local = posixpath.normpath(flag_value(argv, "--index"))
                self.assertTrue(any(local.startswith(d + "/") for d in state),
                                f"{name}: --index {local} is not under StateDirectory {state}")

    def tls_sources(self, name, text):
        """{TLS file flag: the file it reads}: a literal path, or %d/NAME's LoadCredential=NAME:PATH
        (systemd copies PATH into the unit's credentials directory, %d, readable by its user)."""
        credentials = {}
        for setting in self.setting(text, "LoadCredential"):
            credential, _, path = setting.partition(":")
            credentials[credential] = path
        sources = {}
        for arg in self.exec_start(text)[1:]:
            flag, _, value = arg.partition("=")
            if flag not in TLS_FILE_FLAGS:
                continue
            if value.startswith("%d/"):
                self.assertIn(value[3:], credentials, f"{name} {flag}={value}: no LoadCredential")
                value = credentials[value[3:]]
            sources[flag] = value
        read = {a.partition("=")[2] for a in self.exec_start(text)}
        unread = sorted(c for c in credentials if f"%d/{c}" not in read)
        self.assertEqual(unread, [], f"{name}: LoadCredential= that no flag reads")
        return sources

    def test_grpc_servers_serve_tls(self):
        for daemon in SERVERS:
            units = self.units_running(daemon)
            self.assertTrue(units, daemon)
            for name, text in units:
                with self.subTest(name):
                    check_server_tls(self, self.exec_start(text), daemon, name)

    def test_every_client_of_a_tls_server_uses_tls(self):
        for daemon, links in LINKS.items():
            clients = self.units_running(daemon)
            self.assertTrue(clients, daemon)
            for name, text in clients:
                argv = self.exec_start(text)
                for address, server_daemon, ca, cert, key in links:
                    # The servers are on other hosts: every unit of that daemon.
                    for server, server_text in self.units_running(server_daemon):
                        with self.subTest(f"{name} -> {server}"):
                            server_argv = self.exec_start(server_text)
                            check_client_tls(self, argv, server_argv, server, (ca, cert, key))

    def test_tls_files_come_from_etc_issuescope_tls(self):
        with open(os.path.join(SYSTEMD_DIR, "README.md")) as f:
            readme = f.read()
        used = 0
        for name, text in self.units.items():
            sources = self.tls_sources(name, text)
            comments = "\n".join(l for l in text.splitlines() if l.startswith("#"))
            if sources:
                self.assertIn(UNIT_TLS_DIR, comments, f"{name}: its TLS files are not explained")
            for flag, path in sources.items():
                used += 1
                with self.subTest(f"{name} {flag}"):
                    self.assertTrue(path.startswith(UNIT_TLS_DIR), f"{path}: not in {UNIT_TLS_DIR}")
                    # deploy/systemd/README.md says which files each host holds.
                    self.assertIn(posixpath.basename(path).replace("%i", "ID"), readme)
            for cert, key in (("--tls-cert", "--tls-key"),
                              ("--coordinator-tls-cert", "--coordinator-tls-key"),
                              ("--store-tls-cert", "--store-tls-key"),
                              ("--http-tls-cert", "--http-tls-key")):
                if cert in sources or key in sources:
                    with self.subTest(f"{name} {cert} {key}"):
                        stems = [posixpath.splitext(sources.get(f, ""))[0] for f in (cert, key)]
                        self.assertEqual(stems[0], stems[1], f"{name}: {cert} and {key} are "
                                         "not one certificate's files")
        self.assertGreater(used, 0, "no unit names a TLS file")

    def test_systemd_analyze_verifies_the_units(self):
        analyze = shutil.which("systemd-analyze")
        if analyze is None:
            self.skipTest("systemd-analyze is not installed: units not verified")
        work = tempfile.mkdtemp(prefix="issuescope-units-")
        try:
            paths = []
            for name, text in self.units.items():
                program = self.exec_start(text)[0]
                if os.path.basename(program) in EXTERNAL and not os.access(program, os.X_OK):
                    print(f"{name}: not verified, {program} is not installed", file=sys.stderr)
                    continue
                text = text.replace("/usr/local/bin/", BIN_DIR.rstrip("/") + "/")
                if name.endswith("@.service"):
                    name = name.replace("@.service", "@worker-1.service")
                path = os.path.join(work, name)
                with open(path, "w") as f:
                    f.write(text)
                paths.append(path)
            p = subprocess.run([analyze, "verify", "--man=no"] + paths, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
