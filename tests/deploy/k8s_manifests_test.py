#!/usr/bin/python3
"""Checks the Kubernetes manifests in deploy/k8s and the systemd units in deploy/systemd against
the daemons they run (issue 18).

Manifests drift from the programs they start: a renamed flag, a token variable the secret does
not hold, a probe on a port nobody listens on. This test reads every resource kustomization.yaml
lists and asserts, for every container:

  - its command is one of the built daemons, and every --flag in its args is a flag that
    daemon's --help lists;
  - every variable a --*-env flag names is provided (secret.example.env, or the container's env);
  - $(VAR) references in args are defined in the container's env;
  - gRPC probes and Services point at declared container ports;
that PodDisruptionBudgets select pods and the Prometheus scrape target is the coordinator's
metrics port, that the catalog the coordinator loads (catalog.toml) is accepted by the real
coordinator, and, where kubectl is installed, that `kubectl kustomize` renders the whole set.
For the systemd units: every daemon has one, every --flag of its ExecStart is one its --help
lists, every token variable is in tokens.example.env, every ${VAR} is explained in the unit, and
`systemd-analyze verify` accepts them (with the programs of this build) where it is installed.

Run by CTest (label e2e) as /usr/bin/python3 k8s_manifests_test.py with ISSUESCOPE_BIN_DIR and
ISSUESCOPE_SOURCE_DIR set. Without python3-yaml it exits 77 (CTest: skipped), saying so.
"""

import os
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


class ManifestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kustomization, cls.resources = load_resources()
        cls.secrets = secret_keys(cls.kustomization)
        cls.pods = []  # (workload name, pod spec, pod labels)
        for r in cls.resources:
            if r["kind"] in ("StatefulSet", "Deployment"):
                template = r["spec"]["template"]
                cls.pods.append((r["metadata"]["name"], template["spec"],
                                 template["metadata"].get("labels", {})))

    def containers(self):
        for workload, spec, _ in self.pods:
            for c in spec["containers"]:
                yield workload, c

    def test_every_daemon_runs_somewhere(self):
        commands = {c["command"][0] for _, c in self.containers()}
        self.assertEqual(commands, DAEMONS)

    def test_flags_exist_and_variables_are_provided(self):
        flags_of = {}
        for workload, c in self.containers():
            binary = c["command"][0]
            self.assertIn(binary, DAEMONS, f"{workload}/{c['name']}")
            self.assertTrue(os.access(os.path.join(BIN_DIR, binary), os.X_OK),
                            f"{binary} not built in {BIN_DIR}")
            if binary not in flags_of:
                flags_of[binary] = help_flags(binary)
            env_names = {e["name"] for e in c.get("env", [])}
            from_secret = any("secretRef" in e for e in c.get("envFrom", []))
            for arg in c.get("args", []):
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
            numbers = {p["containerPort"] for p in c.get("ports", [])}
            for probe in ("readinessProbe", "livenessProbe"):
                if probe in c:
                    self.assertIn(c[probe]["grpc"]["port"], numbers, f"{workload} {probe}")
        for r in self.resources:
            if r["kind"] != "Service":
                continue
            selector = r["spec"]["selector"]
            pods = [spec for _, spec, labels in self.pods
                    if all(labels.get(k) == v for k, v in selector.items())]
            self.assertEqual(len(pods), 1, f"service {r['metadata']['name']} selects no pod")
            names = {p["name"] for c in pods[0]["containers"] for p in c.get("ports", [])}
            for port in r["spec"]["ports"]:
                self.assertIn(port["targetPort"], names, f"service {r['metadata']['name']}")

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
        self.assertEqual(len(budgets), 3)
        for b in budgets:
            selector = b["spec"]["selector"]["matchLabels"]
            pods = [w for w, _, labels in self.pods
                    if all(labels.get(k) == v for k, v in selector.items())]
            self.assertEqual(len(pods), 1, f"budget {b['metadata']['name']} selects {pods}")

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
        self.assertEqual(kinds, ["ConfigMap", "ConfigMap", "PodDisruptionBudget",
                                 "PodDisruptionBudget", "PodDisruptionBudget", "Secret", "Service",
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

    def exec_start(self, text):
        lines = [l for l in text.splitlines() if l.startswith("ExecStart=")]
        self.assertEqual(len(lines), 1)
        return lines[0][len("ExecStart="):].split()

    def test_every_daemon_has_a_unit(self):
        binaries = {os.path.basename(self.exec_start(t)[0]) for t in self.units.values()}
        self.assertEqual(binaries, DAEMONS)

    def test_flags_exist_and_variables_are_provided(self):
        for name, text in self.units.items():
            argv = self.exec_start(text)
            binary = os.path.basename(argv[0])
            flags = help_flags(binary)
            comments = "\n".join(l for l in text.splitlines() if l.startswith("#"))
            for arg in argv[1:]:
                flag, _, value = arg.partition("=")
                with self.subTest(f"{name} {flag}"):
                    self.assertIn(flag, flags, f"{binary} has no flag {flag}")
                    for var in re.findall(r"\$\{(\w+)\}", value):
                        self.assertIn(var, comments, f"{name}: ${{{var}}} is not explained")
                    if flag.endswith("-env"):
                        self.assertIn(value, self.tokens, f"{name} {flag}: not in tokens.example.env")
                        self.assertIn("EnvironmentFile=/etc/issuescope/tokens.env", text)

    def test_systemd_analyze_verifies_the_units(self):
        analyze = shutil.which("systemd-analyze")
        if analyze is None:
            self.skipTest("systemd-analyze is not installed: units not verified")
        work = tempfile.mkdtemp(prefix="issuescope-units-")
        try:
            paths = []
            for name, text in self.units.items():
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
