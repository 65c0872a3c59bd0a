#include "feed_follower.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "indexer/change_log.h"
#include "spdlog/spdlog.h"

namespace issuescope::indexer {
namespace {

// Backoff sleeps are cut into slices so Stop interrupts them quickly.
constexpr absl::Duration kSleepSlice = absl::Milliseconds(50);

absl::Status Annotate(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

}  // namespace

FeedFollower::FeedFollower(std::string address, std::shared_ptr<grpc::Channel> channel,
                           std::string store_id, ChangeSink* writer, Clock* clock,
                           FeedFollowerOptions options)
    : address_(std::move(address)),
      stub_(v1::IssueStore::NewStub(std::move(channel))),
      writer_(writer),
      clock_(clock),
      options_(options),
      rng_(options.jitter_seed) {
  stats_.address = address_;
  stats_.store_id = std::move(store_id);
  if (!stats_.store_id.empty()) stats_.position = writer_->Position(stats_.store_id);
}

FeedFollower::~FeedFollower() { Stop(); }

void FeedFollower::Start() {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread(&FeedFollower::Run, this);
}

void FeedFollower::Stop() {
  std::lock_guard<std::mutex> lock(start_mu_);
  stopping_ = true;
  {
    std::lock_guard<std::mutex> inner(mu_);
    if (context_ != nullptr) context_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

FeedFollowerStats FeedFollower::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool FeedFollower::SetContext(grpc::ClientContext* context) {
  std::lock_guard<std::mutex> lock(mu_);
  if (context != nullptr && stopping_) return false;
  context_ = context;
  return true;
}

void FeedFollower::Run() {
  int attempt = 0;
  while (!stopping_) {
    bool progressed = false;
    absl::Status status = FollowOnce(&progressed);
    bool repeated = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.caught_up = false;
      if (!stopping_) {
        repeated = !progressed && stats_.last_error == status.ToString();
        stats_.last_error = status.ToString();
      }
    }
    if (stopping_) break;
    if (progressed) attempt = 0;
    // A store that stays down would repeat the same line at every attempt: warn once.
    spdlog::log(repeated ? spdlog::level::debug : spdlog::level::warn,
                "change feed of store {} broke: {}; reconnecting", address_, status.ToString());
    Backoff(attempt);
    attempt = std::min(attempt + 1, 30);
    if (stopping_) break;
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.reconnects;
  }
}

absl::Status FeedFollower::FollowOnce(bool* progressed) {
  std::string store_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    store_id = stats_.store_id;
  }

  // Who is the store now, and how far is it?
  v1::StoreInfo info;
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.info_timeout));
    if (!SetContext(&context)) return absl::CancelledError("follower stopped");
    grpc::Status status = stub_->GetStoreInfo(&context, v1::GetStoreInfoRequest(), &info);
    SetContext(nullptr);
    if (!status.ok()) {
      return Annotate(FromGrpcStatus(status), absl::StrCat("GetStoreInfo of store ", address_));
    }
  }
  if (info.store_id().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("store ", address_, " reported an empty store id"));
  }
  const bool replaced = !store_id.empty() && info.store_id() != store_id;
  if (replaced) {
    spdlog::info("store {} was replaced: id {} -> {}; following the new store", address_,
                 store_id, info.store_id());
  }
  store_id = info.store_id();
  const uint64_t from_seq = writer_->Position(store_id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (replaced) ++stats_.store_changes;
    stats_.store_id = store_id;
    stats_.position = from_seq;
    stats_.store_last_seq = info.last_seq();
    stats_.caught_up = from_seq >= info.last_seq();
  }

  // Follow the feed from the writer's position.
  grpc::ClientContext context;
  if (!SetContext(&context)) return absl::CancelledError("follower stopped");
  v1::ChangesRequest request;
  request.set_from_seq(from_seq);
  request.set_follow(true);
  request.set_max_batch(options_.max_batch);
  request.set_store_id(store_id);
  spdlog::info("following store {} (id {}) from seq {}", address_, store_id, from_seq);
  std::unique_ptr<grpc::ClientReader<v1::ChangeBatch>> reader = stub_->Changes(&context, request);
  std::unique_ptr<ChangeSource> stream =
      StreamSource([&reader](v1::ChangeBatch* batch) { return reader->Read(batch); });
  absl::Status broken = DrainChangeLog(
      *stream, store_id, *writer_, [&](const v1::ChangeBatch& batch, const ApplyResult& result) {
        *progressed = true;
        const uint64_t position = writer_->Position(store_id);
        std::lock_guard<std::mutex> lock(mu_);
        ++stats_.batches;
        stats_.events_applied += result.consumed();
        stats_.position = position;
        stats_.store_last_seq = std::max(stats_.store_last_seq, batch.last_seq());
        stats_.caught_up = position >= stats_.store_last_seq;
      });
  if (!broken.ok()) broken = Annotate(broken, absl::StrCat("store ", address_));
  if (!broken.ok()) context.TryCancel();
  grpc::Status finished = reader->Finish();
  SetContext(nullptr);
  if (!broken.ok()) return broken;
  if (finished.ok()) {
    return absl::UnavailableError(absl::StrCat("store ", address_, " closed the change feed"));
  }
  if (finished.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    spdlog::info("store {} no longer has id {}: {}", address_, store_id,
                 finished.error_message());
  }
  return Annotate(FromGrpcStatus(finished), absl::StrCat("change feed of store ", address_));
}

void FeedFollower::Backoff(int attempt) {
  absl::Duration delay = options_.initial_backoff;
  for (int i = 0; i < attempt && delay < options_.max_backoff; ++i) delay *= 2;
  delay = std::min(delay, options_.max_backoff);
  // Jittered within [delay/2, delay], so restarted workers are not hit by every indexer at once.
  double fraction = 0.5;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fraction += std::uniform_real_distribution<double>(0.0, 0.5)(rng_);
  }
  absl::Duration remaining = delay * fraction;
  while (remaining > absl::ZeroDuration() && !stopping_) {
    const absl::Duration slice = std::min(remaining, kSleepSlice);
    clock_->SleepFor(slice);
    remaining -= slice;
  }
}

}  // namespace issuescope::indexer
