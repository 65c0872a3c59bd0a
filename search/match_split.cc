#include "search/match_split.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace issuescope::search {

ShardFilter::ShardFilter(std::vector<std::string> uuids) : uuids_(std::move(uuids)) {}

void ShardFilter::init(const Xapian::Database& db) {
  current_ = 0;
  const bool mine = std::find(uuids_.begin(), uuids_.end(), db.get_uuid()) != uuids_.end();
  termfreq_ = mine ? db.get_doccount() : 0;
  last_ = mine ? db.get_lastdocid() : 0;
  if (last_ == 0) current_ = 1;  // at_end at once
}

void ShardFilter::next(double /*min_wt*/) { ++current_; }

void ShardFilter::skip_to(Xapian::docid did, double /*min_wt*/) {
  current_ = std::max(current_, did);
}

std::string ShardFilter::get_description() const {
  return absl::StrCat("ShardFilter(", absl::StrJoin(uuids_, ","), ")");
}

namespace {

// ShardVisitor calls `visit` with each shard, as Xapian sets the source up there; it matches
// nothing. Its clones share the callback.
class ShardVisitor : public Xapian::PostingSource {
 public:
  explicit ShardVisitor(std::shared_ptr<const ShardVisit> visit) : visit_(std::move(visit)) {}
  void init(const Xapian::Database& db) override { (*visit_)(db); }
  Xapian::doccount get_termfreq_min() const override { return 0; }
  Xapian::doccount get_termfreq_est() const override { return 0; }
  Xapian::doccount get_termfreq_max() const override { return 0; }
  void next(double /*min_wt*/) override {}
  bool at_end() const override { return true; }
  Xapian::docid get_docid() const override { return 0; }
  ShardVisitor* clone() const override { return new ShardVisitor(visit_); }
  std::string get_description() const override { return "ShardVisitor()"; }

 private:
  std::shared_ptr<const ShardVisit> visit_;
};

}  // namespace

bool VisitShards(const Xapian::Database& db, const ShardVisit& visit) {
  Xapian::Enquire enquire(db);
  enquire.set_query(Xapian::Query(
      (new ShardVisitor(std::make_shared<const ShardVisit>(visit)))->release()));
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  try {
    (void)enquire.get_mset(0, 1);
  } catch (const Xapian::UnimplementedError&) {
    return false;  // e.g. a remote shard, which cannot run a posting source of ours
  } catch (const Xapian::InvalidOperationError&) {
    return false;
  } catch (const Xapian::SerialisationError&) {
    return false;
  }
  return true;
}

std::vector<ShardShare> ListShards(const Xapian::Database& db) {
  std::vector<ShardShare> out;
  const bool visited = VisitShards(db, [&out](const Xapian::Database& shard) {
    Xapian::rev revision = 0;
    try {
      revision = shard.get_revision();
    } catch (const Xapian::InvalidOperationError&) {
      // A backend without revisions.
    } catch (const Xapian::UnimplementedError&) {
    }
    out.push_back(ShardShare{shard.get_uuid(), shard.get_doccount(), revision,
                             shard.get_lastdocid()});
  });
  if (!visited) return {};
  return out;
}

std::string RevisionKey(const Xapian::Database& db) {
  std::string key;
  for (const ShardShare& shard : ListShards(db)) {
    if (shard.uuid.empty()) return "";
    absl::StrAppend(&key, shard.uuid, "@", shard.revision, ";");
  }
  return key;
}

MatchSplit::MatchSplit(const Xapian::Database& db) : dbs_{&db} {}

MatchSplit::MatchSplit(const std::vector<const Xapian::Database*>& handles)
    : MatchSplit(handles, handles.size() < 2 ? std::vector<ShardShare>()
                                             : ListShards(*handles.front())) {}

MatchSplit::MatchSplit(const std::vector<const Xapian::Database*>& handles,
                       std::vector<ShardShare> shards) {
  dbs_.push_back(handles.front());
  if (handles.size() < 2) return;
  const size_t parts = std::min(handles.size(), shards.size());
  if (parts < 2) return;
  // Every handle must be the same set of shards (a handle opened before the index was
  // rebuilt or resharded is not): otherwise a shard could fall outside every part.
  const std::string uuid = handles.front()->get_uuid();
  for (size_t i = 1; i < parts; ++i) {
    if (handles[i]->get_uuid() != uuid) return;
  }
  // Shards are told apart by UUID: a backend without them (in-memory) is not split.
  std::vector<std::string> seen;
  for (const ShardShare& shard : shards) seen.push_back(shard.uuid);
  std::sort(seen.begin(), seen.end());
  if (seen.front().empty() || std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return;
  // Largest shard first to the part with the fewest documents so far (empty shards last; a
  // part may end up with none, and then matches nothing).
  std::stable_sort(shards.begin(), shards.end(), [](const ShardShare& a, const ShardShare& b) {
    return a.documents > b.documents;
  });
  uuids_.assign(parts, {});
  std::vector<uint64_t> load(parts, 0);
  for (const ShardShare& shard : shards) {
    const size_t lightest =
        static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    uuids_[lightest].push_back(shard.uuid);
    load[lightest] += shard.documents;
  }
  dbs_.assign(handles.begin(), handles.begin() + static_cast<std::ptrdiff_t>(parts));
}

Xapian::Query MatchSplit::Restrict(size_t i, const Xapian::Query& query) const {
  if (uuids_.empty()) return query;
  return Xapian::Query(Xapian::Query::OP_FILTER, query,
                       Xapian::Query((new ShardFilter(uuids_[i]))->release()));
}

namespace {

// WorkerPool runs the parts of splits other than the caller's: threads started once (one per
// core but the caller's) and kept, since starting a thread per part cost about 40 µs, a few
// per query. A task never waits for another task, so a full queue only delays. Leaked on
// purpose: its threads may still wait on it while the process exits.
class WorkerPool {
 public:
  static WorkerPool& Get() {
    static WorkerPool* pool = new WorkerPool(
        std::max(1, static_cast<int>(std::thread::hardware_concurrency()) - 1));
    return *pool;
  }

  void Submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

 private:
  explicit WorkerPool(int threads) {
    for (int i = 0; i < threads; ++i) {
      std::thread([this] { Work(); }).detach();
    }
  }

  void Work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [&] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
};

}  // namespace

void MatchSplit::Run(const std::function<void(size_t)>& body) const {
  if (dbs_.size() == 1) {
    body(0);
    return;
  }
  // The other parts go to the pool; this thread runs part 0, then waits for the rest.
  struct Call {
    std::mutex mu;
    std::condition_variable done;
    size_t pending = 0;
    std::exception_ptr error;
  } call;
  call.pending = dbs_.size() - 1;
  const auto finish = [&call](std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(call.mu);
    if (error && !call.error) call.error = error;
    if (--call.pending == 0) call.done.notify_one();
  };
  std::exception_ptr own_error;
  size_t submitted = 1;
  try {
    for (; submitted < dbs_.size(); ++submitted) {
      const size_t i = submitted;
      WorkerPool::Get().Submit([&body, &finish, i] {
        try {
          body(i);
          finish(nullptr);
        } catch (...) {
          finish(std::current_exception());
        }
      });
    }
  } catch (...) {
    // Could not hand a part over (out of memory): wait only for those handed over.
    own_error = std::current_exception();
    std::lock_guard<std::mutex> lock(call.mu);
    call.pending -= dbs_.size() - submitted;
  }
  if (!own_error) {
    try {
      body(0);
    } catch (...) {
      own_error = std::current_exception();
    }
  }
  std::unique_lock<std::mutex> lock(call.mu);
  call.done.wait(lock, [&] { return call.pending == 0; });
  if (own_error) std::rethrow_exception(own_error);
  if (call.error) std::rethrow_exception(call.error);
}

}  // namespace issuescope::search
