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
changesets; that PodDisruptionBudgets select pods (and leave a replicated workload evictable)
and the Prometheus scrape target is the coordinator's metrics port, that the catalog the
coordinator loads (catalog.toml) is accepted by the real coordinator, and, where kubectl is
installed, that `kubectl kustomize` renders the whole set.
For the systemd units: every daemon has one and every unit runs a daemon or an EXTERNAL program,
every flag of its ExecStart is one its --help lists, every token variable is in
tokens.example.env, every ${VAR} is explained in the unit and comes from an EnvironmentFile,
every search replica copies the indexer's index through the replication server's port, and
`systemd-analyze verify` accepts them (with the programs of this build) where it is installed.

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
# Programs of Debian packages the deployment runs beside the daemons, and where they are.
REPLICATE_SERVER = "xapian-replicate-server"  # xapian-tools: serves the index to search replicas
EXTERNAL = {REPLICATE_SERVER: "/usr/bin/xapian-replicate-server"}
# Defaults of the flags the replica checks read (each program's --help).
DEFAULTS = {"--replicate-index": "index", "--replicate-shards": "1", "--shards": "1",
            "--keep-changesets": "0"}


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


class ManifestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kustomization, cls.resources = load_resources()
        cls.secrets = secret_keys(cls.kustomization)
        cls.pods = []  # (workload name, pod spec, pod labels)
        cls.replicas = {}  # workload name -> replicas
        for r in cls.resources:
            if r["kind"] in ("StatefulSet", "Deployment"):
                template = r["spec"]["template"]
                cls.pods.append((r["metadata"]["name"], template["spec"],
                                 template["metadata"].get("labels", {})))
                cls.replicas[r["metadata"]["name"]] = r["spec"].get("replicas", 1)
        cls.external = {name: ExternalProgram(name) for name in EXTERNAL}

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
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                if probe not in c:
                    continue
                with self.subTest(f"{workload}/{c['name']} {probe}"):
                    # gRPC health is served by the daemons on --listen; the replication server
                    # speaks its own protocol, so it gets a TCP probe of its --port.
                    kind = "grpc" if c["command"][0] in DAEMONS else "tcpSocket"
                    self.assertEqual([k for k in ("grpc", "tcpSocket", "httpGet", "exec")
                                      if k in c[probe]], [kind])
                    port = c[probe][kind]["port"]
                    port = numbers.get(port, port)  # a tcpSocket probe may name the port
                    self.assertIn(port, numbers.values(), "not a declared container port")
                    self.assertEqual(port, self.listen_port(c), "not the port it listens on")
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
        self.assertEqual(kinds, ["ConfigMap", "ConfigMap", "Deployment", "PodDisruptionBudget",
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
        self.assertEqual(binaries - set(EXTERNAL), DAEMONS,
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
            self.assertIn(binary, DAEMONS, f"{name} runs neither a daemon nor an EXTERNAL program")
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
