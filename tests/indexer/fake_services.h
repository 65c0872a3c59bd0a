// Test doubles served over loopback gRPC: FakeIssueStore (a crawler worker's store with a
// scripted change log) and FakeCoordinator (GetStatus with a scripted worker list).
//
// FakeIssueStore serves Changes in batches of at most `max_batch` events (default 2), waits for
// new events while following, can break the next stream after N batches (UNAVAILABLE), and can
// be replaced by a store with a new id (open streams end, as when a worker restarts wiped).
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "issuescope/v1/coordinator.grpc.pb.h"
#include "issuescope/v1/store.grpc.pb.h"

namespace issuescope::indexer::testing {

class FakeIssueStore final : public v1::IssueStore::Service {
 public:
  explicit FakeIssueStore(std::string store_id) : store_id_(std::move(store_id)) {}

  // Append adds events to the change log (seqs must increase) and wakes followers.
  void Append(const std::vector<v1::ChangeEvent>& events) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& e : events) log_.push_back(e);
    cv_.notify_all();
  }
  // Replace wipes the store: new id, new log; open streams end with UNAVAILABLE. With
  // `stale_info_once`, the next GetStoreInfo still reports the old id (the race a follower
  // meets when the store is wiped between GetStoreInfo and Changes).
  void Replace(std::string store_id, const std::vector<v1::ChangeEvent>& events,
               bool stale_info_once = false) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stale_info_once) stale_info_ = store_id_;
    store_id_ = std::move(store_id);
    log_ = events;
    ++generation_;
    cv_.notify_all();
  }
  // BreakNextStreamAfter makes the next Changes stream fail (UNAVAILABLE) after `batches`.
  void BreakNextStreamAfter(int batches) {
    std::lock_guard<std::mutex> lock(mu_);
    break_after_ = batches;
  }
  // Shutdown ends every open stream.
  void Shutdown() {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
    cv_.notify_all();
  }
  // ChangesRequests returns every Changes request received, in order.
  std::vector<v1::ChangesRequest> ChangesRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // EventsSent counts the events sent over all streams.
  int64_t EventsSent() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_sent_;
  }

  grpc::Status GetStoreInfo(grpc::ServerContext*, const v1::GetStoreInfoRequest*,
                            v1::StoreInfo* info) override {
    std::lock_guard<std::mutex> lock(mu_);
    info->set_store_id(stale_info_.empty() ? store_id_ : stale_info_);
    stale_info_.clear();
    info->set_last_seq(log_.empty() ? 0 : log_.back().seq());
    return grpc::Status::OK;
  }

  grpc::Status Changes(grpc::ServerContext* context, const v1::ChangesRequest* request,
                       grpc::ServerWriter<v1::ChangeBatch>* writer) override {
    std::unique_lock<std::mutex> lock(mu_);
    requests_.push_back(*request);
    if (!request->store_id().empty() && request->store_id() != store_id_) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "store id is " + store_id_ + ", not " + request->store_id());
    }
    const int break_after = break_after_;
    break_after_ = -1;
    const int generation = generation_;
    uint64_t cursor = request->from_seq();
    int sent_batches = 0;
    while (true) {
      if (shutdown_ || context->IsCancelled()) return grpc::Status::CANCELLED;
      if (generation != generation_) {
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "store restarted");
      }
      if (break_after >= 0 && sent_batches >= break_after) {
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection reset (scripted)");
      }
      v1::ChangeBatch batch;
      batch.set_store_id(store_id_);
      for (const v1::ChangeEvent& e : log_) {
        if (e.seq() <= cursor) continue;
        if (batch.events_size() >= max_batch_) break;
        *batch.add_events() = e;
        batch.set_last_seq(e.seq());
      }
      if (batch.events_size() > 0) {
        cursor = batch.last_seq();
        events_sent_ += batch.events_size();
        ++sent_batches;
        lock.unlock();
        const bool written = writer->Write(batch);
        lock.lock();
        if (!written) return grpc::Status::CANCELLED;
        continue;
      }
      if (!request->follow()) return grpc::Status::OK;
      cv_.wait_for(lock, std::chrono::milliseconds(10));
    }
  }

 private:
  const int max_batch_ = 2;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string store_id_;
  std::string stale_info_;
  std::vector<v1::ChangeEvent> log_;
  int generation_ = 0;
  int break_after_ = -1;
  bool shutdown_ = false;
  std::vector<v1::ChangesRequest> requests_;
  int64_t events_sent_ = 0;
};

class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  // SetWorkers replaces the worker list GetStatus reports.
  void SetWorkers(const std::vector<v1::WorkerStatus>& workers) {
    std::lock_guard<std::mutex> lock(mu_);
    workers_ = workers;
  }
  grpc::Status GetStatus(grpc::ServerContext*, const v1::GetStatusRequest*,
                         v1::GetStatusResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& w : workers_) *response->add_workers() = w;
    return grpc::Status::OK;
  }
  grpc::Status ReportIndexProgress(grpc::ServerContext*,
                                   const v1::ReportIndexProgressRequest* request,
                                   v1::ReportIndexProgressResponse*) override {
    std::lock_guard<std::mutex> lock(mu_);
    progress_ = *request;
    ++progress_reports_;
    return grpc::Status::OK;
  }
  // LastProgress returns the last ReportIndexProgress request and how many came.
  std::pair<v1::ReportIndexProgressRequest, int> LastProgress() {
    std::lock_guard<std::mutex> lock(mu_);
    return {progress_, progress_reports_};
  }

 private:
  std::mutex mu_;
  std::vector<v1::WorkerStatus> workers_;
  v1::ReportIndexProgressRequest progress_;
  int progress_reports_ = 0;
};

// LoopbackServer serves one service on 127.0.0.1 at a free port until destroyed (plaintext, or
// with the given credentials, e.g. TLS).
class LoopbackServer {
 public:
  explicit LoopbackServer(grpc::Service* service,
                          std::shared_ptr<grpc::ServerCredentials> credentials =
                              grpc::InsecureServerCredentials()) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", std::move(credentials), &port_);
    builder.RegisterService(service);
    server_ = builder.BuildAndStart();
  }
  ~LoopbackServer() {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }
  // address returns "127.0.0.1:PORT".
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// Worker returns a WorkerStatus as the coordinator lists it.
inline v1::WorkerStatus Worker(const std::string& id, const std::string& address,
                               const std::string& store_id) {
  v1::WorkerStatus w;
  w.set_worker_id(id);
  w.set_store_address(address);
  w.set_store_id(store_id);
  w.set_alive(true);
  return w;
}

}  // namespace issuescope::indexer::testing
