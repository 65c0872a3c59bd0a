// Helpers shared by the simulator tests: start a simulator on an ephemeral loopback port, GET
// over real HTTP, and parse GitHub Link headers. Header-only; test code only.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/simulator/tracker_simulator.h"

namespace issuescope::sim::testing {

// StartOrDie starts a simulator and fails the test when it cannot.
inline std::unique_ptr<TrackerSimulator> StartOrDie(SimulatorOptions options) {
  auto sim = TrackerSimulator::Start(std::move(options));
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? std::move(*sim) : nullptr;
}

// Reply is one HTTP exchange's outcome.
struct Reply {
  int status = 0;
  httplib::Headers headers;
  std::string body;
  nlohmann::json json;  // parsed body (null when empty or not JSON)
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// Get fetches `path_and_query` (or an absolute URL on the same server) from `sim`.
inline Reply Get(const TrackerSimulator& sim, std::string path_and_query,
                 const httplib::Headers& headers = {}) {
  const std::string base = sim.base_url();
  if (path_and_query.rfind(base, 0) == 0) path_and_query = path_and_query.substr(base.size());
  httplib::Client client("127.0.0.1", sim.port());
  Reply reply;
  auto res = client.Get(path_and_query.c_str(), headers);
  if (!res) {
    ADD_FAILURE() << "GET " << path_and_query << " failed: " << httplib::to_string(res.error());
    return reply;
  }
  reply.status = res->status;
  reply.headers = res->headers;
  reply.body = res->body;
  reply.json = nlohmann::json::parse(res->body, nullptr, false);
  if (reply.json.is_discarded()) reply.json = nullptr;
  return reply;
}

// Post sends a JSON body to `path`.
inline Reply Post(const TrackerSimulator& sim, const std::string& path, const std::string& body) {
  httplib::Client client("127.0.0.1", sim.port());
  Reply reply;
  auto res = client.Post(path.c_str(), body, "application/json");
  if (!res) {
    ADD_FAILURE() << "POST " << path << " failed";
    return reply;
  }
  reply.status = res->status;
  reply.headers = res->headers;
  reply.body = res->body;
  reply.json = nlohmann::json::parse(res->body, nullptr, false);
  if (reply.json.is_discarded()) reply.json = nullptr;
  return reply;
}

// RawGet sends a bare HTTP/1.1 GET over a socket and returns everything the server sent until it
// closed the connection (headers exactly as sent, no decoding), or "" when it cannot connect.
inline std::string RawGet(int port, const std::string& target) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" +
                                std::to_string(port) + "\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buf[65536];
      ssize_t n = 0;
      while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

// RawHeader returns the value of header `name` (exact case) in a RawGet answer, or "".
inline std::string RawHeader(const std::string& raw, const std::string& name) {
  const size_t at = raw.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const size_t start = at + name.size() + 4;
  return raw.substr(start, raw.find("\r\n", start) - start);
}

// ParseLinks maps rel -> URL for a GitHub Link header.
inline std::map<std::string, std::string> ParseLinks(const std::string& header) {
  std::map<std::string, std::string> links;
  for (absl::string_view part : absl::StrSplit(header, ", <")) {
    const size_t close = part.find('>');
    const size_t rel = part.find("rel=\"");
    if (close == absl::string_view::npos || rel == absl::string_view::npos) continue;
    absl::string_view url = part.substr(0, close);
    absl::ConsumePrefix(&url, "<");
    absl::string_view name = part.substr(rel + 5);
    name = name.substr(0, name.find('"'));
    links[std::string(name)] = std::string(url);
  }
  return links;
}

}  // namespace issuescope::sim::testing
