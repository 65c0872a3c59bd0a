// WebCluster runs the real binaries the web tests talk to, on loopback: the tracker simulator,
// a one-machine `issuescope crawl` of its repositories into a temporary data directory, and
// issuescope-search over that index with --http-listen. Used by the HTTP/JSON end-to-end test
// and the browser test.
//
// Thread-compatible: one test thread owns a WebCluster. The destructor stops the processes and
// removes the data directory unless `keep_dir` was set (tests set it after a failure).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/subprocess.h"

namespace issuescope::testing {

// WebClusterOptions shapes the generated corpus.
struct WebClusterOptions {
  // Repositories the simulator generates. Default: 3.
  int repos = 3;
  // Issues per repository. Default: 60.
  int issues_per_repo = 60;
  // Mean comments per issue. Default: 3.
  int comments_per_issue = 3;
  // Phrase planted verbatim into `plant_count` issues. Default: "marmoset quantile drift".
  std::string plant_phrase = "marmoset quantile drift";
  // Default: 6.
  int plant_count = 6;
  // Generator seed. Default: 11.
  int seed = 11;
};

// BinPath is the path of one of the built programs ("issuescope").
std::string BinPath(const std::string& name);

// WebCluster is the running set of processes; see the file comment.
class WebCluster {
 public:
  // Start generates the corpus, crawls it and starts the search service; the processes' logs
  // are in dir()/*.log.
  static absl::StatusOr<std::unique_ptr<WebCluster>> Start(const WebClusterOptions& options);
  ~WebCluster();

  // dir is the temporary directory holding data and logs.
  const std::string& dir() const { return dir_; }
  // http_port is the search service's HTTP port on 127.0.0.1.
  int http_port() const { return http_port_; }
  // http_url is "http://127.0.0.1:PORT".
  std::string http_url() const;
  // keep_dir leaves the directory in place for inspection after the test.
  void keep_dir() { keep_ = true; }

 private:
  WebCluster() = default;

  std::string dir_;
  int http_port_ = 0;
  bool keep_ = false;
  std::unique_ptr<Subprocess> simulator_;
  std::unique_ptr<Subprocess> search_;
};

// BinPath is the path of one of the project's executables in the build's bin directory.
std::string BinPath(const std::string& name);

// ReadTextFile returns the contents of `path` ("" when unreadable).
std::string ReadTextFile(const std::string& path);

}  // namespace issuescope::testing
