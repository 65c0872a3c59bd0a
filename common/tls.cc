#include "common/tls.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>


#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#error "cpp-httplib must be built with CPPHTTPLIB_OPENSSL_SUPPORT (link PkgConfig::HTTPLIB)"
#endif

namespace issuescope {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};

// NoPassword refuses to ask for a pass phrase (OpenSSL's default would read the terminal).
int NoPassword(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) { return 0; }

std::unique_ptr<BIO, BioFree> MemoryBio(const std::string& text) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::unique_ptr<X509, X509Free> ParseCertificate(const std::string& pem) {
  auto bio = MemoryBio(pem);
  return std::unique_ptr<X509, X509Free>(
      PEM_read_bio_X509(bio.get(), nullptr, NoPassword, nullptr));
}

std::unique_ptr<EVP_PKEY, PkeyFree> ParsePrivateKey(const std::string& pem) {
  auto bio = MemoryBio(pem);
  return std::unique_ptr<EVP_PKEY, PkeyFree>(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassword, nullptr));
}

// Loaded holds the checked PEM texts of a ServerTlsFiles.
struct Loaded {
  std::string cert;
  std::string key;
  std::string client_ca;
};

absl::StatusOr<Loaded> Load(const ServerTlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    const std::string& missing = files.cert.empty() ? files.cert_flag : files.key_flag;
    return absl::InvalidArgumentError(absl::StrCat(missing, " is missing: TLS needs both ",
                                                   files.cert_flag, " and ", files.key_flag));
  }
  if (!files.client_ca.empty() && files.cert.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(files.client_ca_flag, " needs ",
                                                   files.cert_flag, " and ", files.key_flag));
  }
  Loaded loaded;
  if (files.cert.empty()) return loaded;
  ASSIGN_OR_RETURN(loaded.cert, ReadPemFile(files.cert, files.cert_flag, "CERTIFICATE"));
  ASSIGN_OR_RETURN(loaded.key, ReadPemFile(files.key, files.key_flag, "PRIVATE KEY"));
  absl::Status status;
  auto cert = ParseCertificate(loaded.cert);
  auto key = ParsePrivateKey(loaded.key);
  if (cert == nullptr) {
    status = absl::InvalidArgumentError(
        absl::StrCat(files.cert_flag, " ", files.cert, ": OpenSSL cannot parse the certificate"));
  } else if (key == nullptr) {
    status = absl::InvalidArgumentError(absl::StrCat(
        files.key_flag, " ", files.key, ": not an unencrypted private key OpenSSL can parse"));
  } else if (X509_check_private_key(cert.get(), key.get()) != 1) {
    status = absl::InvalidArgumentError(absl::StrCat(files.key_flag, " ", files.key,
                                                     " is not the private key of ",
                                                     files.cert_flag, " ", files.cert));
  }
  if (status.ok() && !files.client_ca.empty()) {
    auto ca = ReadPemFile(files.client_ca, files.client_ca_flag, "CERTIFICATE");
    if (!ca.ok()) return ca.status();
    loaded.client_ca = *std::move(ca);
    if (ParseCertificate(loaded.client_ca) == nullptr) {
      status = absl::InvalidArgumentError(absl::StrCat(
          files.client_ca_flag, " ", files.client_ca, ": OpenSSL cannot parse the certificate"));
    }
  }
  ERR_clear_error();  // leave no error of ours behind for the TLS libraries
  if (!status.ok()) return status;
  return loaded;
}

}  // namespace

absl::StatusOr<std::string> ReadPemFile(const std::string& path, const std::string& flag,
                                        const std::string& label) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": cannot read"));
  }
  const std::string& pem = *text;
  if (!absl::StrContains(pem, "-----BEGIN ") || !absl::StrContains(pem, label + "-----")) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": not a PEM ", label));
  }
  return pem;
}

absl::Status CheckServerTlsFiles(const ServerTlsFiles& files) { return Load(files).status(); }

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const ServerTlsFiles& files) {
  ASSIGN_OR_RETURN(Loaded loaded, Load(files));
  if (!files.enabled()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      files.client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = loaded.client_ca;
  options.pem_key_cert_pairs.push_back({loaded.key, loaded.cert});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::unique_ptr<httplib::Server>> MakeHttpServer(const ServerTlsFiles& files) {
  RETURN_IF_ERROR(CheckServerTlsFiles(files));
  if (!files.enabled()) return std::make_unique<httplib::Server>();
  auto server = std::make_unique<httplib::SSLServer>(
      files.cert.c_str(), files.key.c_str(),
      files.client_ca.empty() ? nullptr : files.client_ca.c_str());
  if (!server->is_valid()) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("HTTPS: OpenSSL refused ", files.cert_flag, " ",
                                                   files.cert, " with ", files.key_flag, " ",
                                                   files.key));
  }
  return server;
}

}  // namespace issuescope
