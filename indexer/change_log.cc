#include "indexer/change_log.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace issuescope::indexer {
namespace {

class StoreLog final : public ChangeSource {
 public:
  StoreLog(ReadChangesFn read, uint64_t from, uint64_t until, std::string name, int max_events)
      : read_(std::move(read)), seq_(from), until_(until), name_(std::move(name)),
        max_events_(max_events > 0 ? max_events : 1000) {}

  absl::StatusOr<bool> Next(v1::ChangeBatch* batch) override {
    if (seq_ >= until_) return false;
    absl::StatusOr<v1::ChangeBatch> read = read_(seq_, max_events_);
    if (!read.ok()) {
      return absl::Status(read.status().code(),
                          absl::StrCat("reading the change log of store ", name_, " after seq ",
                                       seq_, ": ", read.status().message()));
    }
    if (read->last_seq() <= seq_) {
      return absl::DataLossError(absl::StrCat("store ", name_,
                                              " made no progress reading its change log at seq ",
                                              seq_, " of ", until_));
    }
    seq_ = read->last_seq();
    *batch = *std::move(read);
    return true;
  }

 private:
  ReadChangesFn read_;
  uint64_t seq_;
  const uint64_t until_;
  const std::string name_;
  const int max_events_;
};

class Stream final : public ChangeSource {
 public:
  explicit Stream(std::function<bool(v1::ChangeBatch*)> read) : read_(std::move(read)) {}
  absl::StatusOr<bool> Next(v1::ChangeBatch* batch) override { return read_(batch); }

 private:
  std::function<bool(v1::ChangeBatch*)> read_;
};

}  // namespace

std::unique_ptr<ChangeSource> StoreLogSource(ReadChangesFn read, uint64_t from, uint64_t until,
                                             std::string name, int max_events) {
  return std::make_unique<StoreLog>(std::move(read), from, until, std::move(name), max_events);
}

std::unique_ptr<ChangeSource> StreamSource(std::function<bool(v1::ChangeBatch*)> read) {
  return std::make_unique<Stream>(std::move(read));
}

absl::Status DrainChangeLog(ChangeSource& source, absl::string_view store_id, ChangeSink& sink,
                            const BatchApplied& on_batch, int64_t* applied) {
  if (applied != nullptr) *applied = 0;
  v1::ChangeBatch batch;
  while (true) {
    batch.Clear();
    absl::StatusOr<bool> more = source.Next(&batch);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    if (batch.store_id().empty()) {
      batch.set_store_id(std::string(store_id));
    } else if (batch.store_id() != store_id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "a batch of store ", batch.store_id(), " while following ", store_id));
    }
    ApplyResult result;
    if (absl::Status s = sink.Apply(batch, &result); !s.ok()) return s;
    if (applied != nullptr) *applied += result.consumed();
    if (on_batch) on_batch(batch, result);
  }
}

}  // namespace issuescope::indexer
