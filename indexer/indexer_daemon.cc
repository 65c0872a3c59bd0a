#include "indexer_daemon.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_channel.h"
#include "common/grpc_status.h"
#include "spdlog/spdlog.h"

namespace issuescope::indexer {
namespace {

// Sleeps are cut into slices so Stop interrupts them quickly.
constexpr absl::Duration kSleepSlice = absl::Milliseconds(50);

}  // namespace

IndexerDaemon::IndexerDaemon(ChangeSink* writer, Clock* clock, IndexerDaemonOptions options)
    : writer_(writer), clock_(clock), options_(std::move(options)) {}

IndexerDaemon::~IndexerDaemon() { Stop(); }

absl::Status IndexerDaemon::Start() {
  const bool has_coordinator = !options_.coordinator_address.empty();
  if (has_coordinator == !options_.store_addresses.empty()) {
    return absl::InvalidArgumentError(
        "give either a coordinator address or a list of store addresses (exactly one of them)");
  }
  for (const std::string& address : options_.store_addresses) {
    if (address.empty() || address.find(':') == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("store address \"", address, "\" is not HOST:PORT"));
    }
  }
  const bool id_ok = !options_.indexer_id.empty() && options_.indexer_id.size() <= 64 &&
                     std::all_of(options_.indexer_id.begin(), options_.indexer_id.end(),
                                 [](unsigned char c) {
                                   return std::isalnum(c) || c == '.' || c == '_' || c == '-';
                                 });
  if (!id_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "indexer id \"", options_.indexer_id, "\" must match [A-Za-z0-9._-]{1,64} (--id)"));
  }
  if (has_coordinator && options_.coordinator_address.find(':') == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "coordinator address \"", options_.coordinator_address, "\" is not HOST:PORT"));
  }
  if (has_coordinator) {
    auto channel = CreateCoordinatorChannel(options_.coordinator_address,
                                            options_.coordinator_tls, options_.coordinator_token);
    if (!channel.ok()) return channel.status();
    std::lock_guard<std::mutex> lock(mu_);
    coordinator_ = v1::Coordinator::NewStub(*channel);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto credentials = StoreCredentialsLocked(); !credentials.ok()) {
      return credentials.status();
    }
    if (stopping_) return absl::FailedPreconditionError("indexer daemon was stopped");
    if (thread_.joinable()) return absl::FailedPreconditionError("indexer daemon already started");
    for (const std::string& address : options_.store_addresses) {
      Key key(address, "");
      if (followers_.count(key) == 0) StartFollowerLocked(key);
    }
    thread_ = std::thread(&IndexerDaemon::Run, this);
  }
  return absl::OkStatus();
}

void IndexerDaemon::Stop() {
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    thread.swap(thread_);
  }
  if (thread.joinable()) thread.join();
  std::map<Key, std::unique_ptr<FeedFollower>> followers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    followers.swap(followers_);
  }
  for (auto& [key, follower] : followers) follower->Stop();
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
IndexerDaemon::StoreCredentialsLocked() {
  if (store_credentials_ == nullptr) {
    auto credentials = ChannelCredentialsFor(options_.store_tls);
    if (!credentials.ok()) return credentials.status();
    store_credentials_ = *std::move(credentials);
  }
  return store_credentials_;
}

void IndexerDaemon::StartFollowerLocked(const Key& key) {
  // A change event carries an issue with all its comments; one long thread can exceed gRPC's
  // default 4 MB message limit, and a refused batch would be re-sent forever.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  auto channel = grpc::CreateCustomChannel(key.first, store_credentials_, args);
  auto follower = std::make_unique<FeedFollower>(key.first, std::move(channel), key.second,
                                                 writer_, clock_, options_.follower);
  follower->Start();
  followers_[key] = std::move(follower);
}

absl::Status IndexerDaemon::PollOnce() {
  if (options_.coordinator_address.empty()) {
    return absl::FailedPreconditionError("indexer daemon has no coordinator to poll");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (coordinator_ == nullptr) {
      auto channel = CreateCoordinatorChannel(options_.coordinator_address,
                                            options_.coordinator_tls, options_.coordinator_token);
      if (!channel.ok()) return channel.status();
      coordinator_ = v1::Coordinator::NewStub(*channel);
    }
    if (auto credentials = StoreCredentialsLocked(); !credentials.ok()) {
      return credentials.status();
    }
  }
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  v1::GetStatusResponse response;
  grpc::Status status = coordinator_->GetStatus(&context, v1::GetStatusRequest(), &response);
  if (!status.ok()) {
    absl::Status error = FromGrpcStatus(status);
    return absl::Status(error.code(), absl::StrCat("GetStatus of coordinator ",
                                                   options_.coordinator_address, ": ",
                                                   error.message()));
  }
  std::set<Key> wanted;
  for (const v1::WorkerStatus& worker : response.workers()) {
    if (worker.store_address().empty()) continue;
    wanted.emplace(worker.store_address(), worker.store_id());
  }

  std::vector<std::unique_ptr<FeedFollower>> retired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::CancelledError("indexer daemon stopped");
    for (auto it = followers_.begin(); it != followers_.end();) {
      if (wanted.count(it->first) == 0) {
        spdlog::info("store {} (id {}) is no longer listed by the coordinator; stopping its "
                     "follower", it->first.first, it->first.second);
        retired.push_back(std::move(it->second));
        it = followers_.erase(it);
      } else {
        ++it;
      }
    }
    // Stop retired followers before their successors start, so one store is never followed
    // twice at once.
    for (auto& follower : retired) follower->Stop();
    for (const Key& key : wanted) {
      if (followers_.count(key) != 0) continue;
      spdlog::info("following store {} (id {})", key.first, key.second);
      StartFollowerLocked(key);
    }
  }
  return ReportProgress();
}

absl::Status IndexerDaemon::ReportProgress() {
  v1::ReportIndexProgressRequest request;
  request.set_indexer_id(options_.indexer_id);
  for (const auto& [store, seq] : writer_->CommittedPositions()) {
    v1::StorePosition* position = request.add_positions();
    position->set_store_id(store);
    position->set_seq(seq);
  }
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  v1::ReportIndexProgressResponse response;
  grpc::Status status = coordinator_->ReportIndexProgress(&context, request, &response);
  if (!status.ok()) {
    absl::Status error = FromGrpcStatus(status);
    return absl::Status(error.code(), absl::StrCat("ReportIndexProgress to coordinator ",
                                                   options_.coordinator_address, " as '",
                                                   options_.indexer_id, "': ", error.message()));
  }
  return absl::OkStatus();
}

std::vector<FeedFollowerStats> IndexerDaemon::Followers() const {
  std::vector<FeedFollowerStats> stats;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, follower] : followers_) stats.push_back(follower->GetStats());
  return stats;
}

void IndexerDaemon::Run() {
  while (!stopping_) {
    if (!options_.coordinator_address.empty()) {
      absl::Status polled = PollOnce();
      std::string error = polled.ok() ? std::string() : polled.ToString();
      if (!polled.ok() && !stopping_ && error != last_poll_error_) {
        spdlog::warn("polling the coordinator failed (retrying every {}): {}",
                     absl::FormatDuration(options_.poll_interval), error);
      }
      last_poll_error_ = error;
    }
    absl::Status flushed = writer_->FlushIfDue();
    if (!flushed.ok()) spdlog::error("{}", flushed.ToString());
    absl::Duration remaining = options_.poll_interval;
    while (remaining > absl::ZeroDuration() && !stopping_) {
      const absl::Duration slice = std::min(remaining, kSleepSlice);
      clock_->SleepFor(slice);
      remaining -= slice;
    }
  }
}

}  // namespace issuescope::indexer
