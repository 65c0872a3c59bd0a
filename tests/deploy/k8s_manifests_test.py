#!/usr/bin/python3
"""Checks the Kubernetes manifests in deploy/k8s against the daemons they run (issue 18).

Manifests drift from the programs they start: a renamed flag, a token variable the secret does
not hold, a probe on a port nobody listens on. This test reads every resource kustomization.yaml
lists and asserts, for every container:

  - its command is one of the built daemons, and every --flag in its args is a flag that
    daemon's --help lists;
  - every variable a --*-env flag names is provided (secret.example.env, or the container's env);
  - $(VAR) references in args are defined in the container's env;
  - gRPC probes and Services point at declared container ports;
and that the catalog the coordinator loads (catalog.toml) is accepted by the real coordinator,
and, where kubectl is installed, that `kubectl kustomize` renders the whole set.

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

    def test_kubectl_renders_the_set(self):
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            self.skipTest("kubectl is not installed: rendering not checked")
        p = subprocess.run([kubectl, "kustomize", K8S_DIR], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        kinds = sorted(r["kind"] for r in yaml.safe_load_all(p.stdout) if r)
        self.assertEqual(kinds, ["ConfigMap", "Secret", "Service", "Service", "Service",
                                 "StatefulSet", "StatefulSet", "StatefulSet"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
