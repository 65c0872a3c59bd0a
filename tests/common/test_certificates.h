// A throw-away PKI for TLS tests, made with the openssl command-line tool at test time: a CA; a
// server certificate it signed for localhost, 127.0.0.1 and ::1; a client certificate it signed
// (for mTLS, CN "indexer"); two worker certificates it signed, one naming worker "w1" (common
// name and DNS name), one naming worker "w2" only as a DNS name (common name "ops"), usable as
// client and server certificates; and a stranger — a certificate and key signed by another CA
// nobody trusts. EC
// P-256 keys, valid one day. Header-only; tests skip when no openssl command is installed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace issuescope {

// TestCertificates names the PEM files MakeTestCertificates wrote.
struct TestCertificates {
  std::string ca;  // the CA certificate every client trusts
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  std::string worker1_cert, worker1_key;  // names worker "w1"
  std::string worker2_cert, worker2_key;  // names worker "w2" (a SAN; its CN is "ops")
  std::string stranger_cert, stranger_key;  // signed by another CA
};

// HasOpenssl says whether the openssl command is on PATH.
inline bool HasOpenssl() { return std::system("command -v openssl >/dev/null 2>&1") == 0; }

// MakeTestCertificates writes the PKI into `dir` (created). INTERNAL naming the failed command.
inline absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string log = dir + "/openssl.log";
  auto run = [&](const std::string& command) -> absl::Status {
    if (std::system(absl::StrCat(command, " >>", log, " 2>&1").c_str()) == 0) {
      return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat("failed (see ", log, "): ", command));
  };
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  auto make_ca = [&](const std::string& name) {
    return run(absl::StrCat("openssl req -x509 ", ec, " -days 1 -subj /CN=issuescope-test-", name,
                            " -keyout ", dir, "/", name, ".key -out ", dir, "/", name, ".pem"));
  };
  // Leaf writes NAME.pem/NAME.key for subject /CN=`cn`, signed by CA `ca`, with `extensions`.
  int serial = 1;
  auto leaf = [&](const std::string& name, const std::string& cn, const std::string& ca,
                  const std::string& extensions) -> absl::Status {
    const std::string ext = absl::StrCat(dir, "/", name, ".ext");
    std::ofstream(ext) << extensions << "\n";
    absl::Status s = run(absl::StrCat("openssl req -new ", ec, " -subj /CN=", cn, " -keyout ",
                                       dir, "/", name, ".key -out ", dir, "/", name, ".csr"));
    if (!s.ok()) return s;
    return run(absl::StrCat("openssl x509 -req -in ", dir, "/", name, ".csr -CA ", dir, "/", ca,
                            ".pem -CAkey ", dir, "/", ca, ".key -set_serial ", ++serial,
                            " -days 1 -extfile ", ext, " -out ", dir, "/", name, ".pem"));
  };
  for (absl::Status s :
       {make_ca("ca"), make_ca("other-ca"),
        leaf("server", "localhost", "ca",
             "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth"),
        leaf("client", "indexer", "ca", "extendedKeyUsage=clientAuth"),
        leaf("worker1", "w1", "ca",
             "subjectAltName=DNS:w1,DNS:localhost,IP:127.0.0.1\n"
             "extendedKeyUsage=serverAuth,clientAuth"),
        leaf("worker2", "ops", "ca",
             "subjectAltName=DNS:w2,DNS:localhost,IP:127.0.0.1\n"
             "extendedKeyUsage=serverAuth,clientAuth"),
        leaf("stranger", "stranger", "other-ca", "extendedKeyUsage=clientAuth")}) {
    if (!s.ok()) return s;
  }
  TestCertificates certs;
  certs.ca = dir + "/ca.pem";
  certs.server_cert = dir + "/server.pem";
  certs.server_key = dir + "/server.key";
  certs.client_cert = dir + "/client.pem";
  certs.client_key = dir + "/client.key";
  certs.worker1_cert = dir + "/worker1.pem";
  certs.worker1_key = dir + "/worker1.key";
  certs.worker2_cert = dir + "/worker2.pem";
  certs.worker2_key = dir + "/worker2.key";
  certs.stranger_cert = dir + "/stranger.pem";
  certs.stranger_key = dir + "/stranger.key";
  return certs;
}

}  // namespace issuescope
