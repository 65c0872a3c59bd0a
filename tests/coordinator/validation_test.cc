// RPC input validation: every bad field is INVALID_ARGUMENT naming the field.
#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/time_util.h"
#include "coordinator/request_validation.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

using ::testing::HasSubstr;

struct BadRequest {
  const char* name;
  std::function<absl::Status(CoordinatorCore*)> call;
  const char* message;  // substring of the error
};

v1::RegisterWorkerRequest Worker(const std::string& id, const std::string& address) {
  v1::RegisterWorkerRequest req;
  req.set_worker_id(id);
  req.set_store_address(address);
  return req;
}

v1::AddRepositoriesRequest AddOne(v1::Tracker tracker, const std::string& owner,
                                  const std::string& name, const std::string& api_url = "") {
  v1::AddRepositoriesRequest req;
  auto* spec = req.add_repositories();
  spec->mutable_repo()->set_tracker(v1::TRACKER_GITHUB);
  spec->mutable_repo()->set_owner("fine");
  spec->mutable_repo()->set_name("fine");
  spec = req.add_repositories();
  spec->mutable_repo()->set_tracker(tracker);
  spec->mutable_repo()->set_owner(owner);
  spec->mutable_repo()->set_name(name);
  spec->mutable_repo()->set_api_url(api_url);
  return req;
}

TEST_F(CoreTest, BadRequestsNameTheField) {
  const BadRequest cases[] = {
      {"empty worker id",
       [](CoordinatorCore* c) { return c->RegisterWorker(Worker("", "h:1")).status(); },
       "worker_id '' must match [A-Za-z0-9._-]{1,64}"},
      {"worker id with slash",
       [](CoordinatorCore* c) { return c->RegisterWorker(Worker("a/b", "h:1")).status(); },
       "worker_id 'a/b'"},
      {"worker id too long",
       [](CoordinatorCore* c) {
         return c->RegisterWorker(Worker(std::string(65, 'w'), "h:1")).status();
       },
       "worker_id"},
      {"address without port",
       [](CoordinatorCore* c) { return c->RegisterWorker(Worker("w", "localhost")).status(); },
       "store_address 'localhost'"},
      {"address with bad port",
       [](CoordinatorCore* c) { return c->RegisterWorker(Worker("w", "h:70000")).status(); },
       "store_address 'h:70000'"},
      {"address with space",
       [](CoordinatorCore* c) { return c->RegisterWorker(Worker("w", "a b:80")).status(); },
       "store_address"},
      {"address without host",
       [](CoordinatorCore* c) { return c->RegisterWorker(Worker("w", ":80")).status(); },
       "store_address ':80' names no host the indexer can dial"},
      {"wildcard IPv4 address",
       [](CoordinatorCore* c) { return c->RegisterWorker(Worker("w", "0.0.0.0:80")).status(); },
       "store_address '0.0.0.0:80' names no host"},
      {"wildcard IPv6 address",
       [](CoordinatorCore* c) { return c->RegisterWorker(Worker("w", "[::]:80")).status(); },
       "store_address '[::]:80' names no host"},
      {"unknown tracker",
       [](CoordinatorCore* c) {
         return c->AddRepositories(AddOne(v1::TRACKER_UNSPECIFIED, "o", "n")).status();
       },
       "repositories[1].repo.tracker 0 is not a known tracker"},
      {"empty owner",
       [](CoordinatorCore* c) {
         return c->AddRepositories(AddOne(v1::TRACKER_GITHUB, "", "n")).status();
       },
       "repositories[1].repo.owner is empty"},
      {"empty name",
       [](CoordinatorCore* c) {
         return c->AddRepositories(AddOne(v1::TRACKER_GITLAB, "o", "")).status();
       },
       "repositories[1].repo.name is empty"},
      {"bad characters",
       [](CoordinatorCore* c) {
         return c->AddRepositories(AddOne(v1::TRACKER_GITHUB, "o w", "n")).status();
       },
       "repositories[1].repo:"},
      {"bad api url",
       [](CoordinatorCore* c) {
         return c->AddRepositories(AddOne(v1::TRACKER_GITHUB, "o", "n", "ftp://x")).status();
       },
       "repositories[1].repo.api_url 'ftp://x'"},
      {"heartbeat with bad slug",
       [](CoordinatorCore* c) {
         v1::HeartbeatRequest req;
         req.set_worker_id("w");
         req.add_held()->set_repo("pytorch");
         return c->Heartbeat(req).status();
       },
       "held[0].repo"},
      {"progress with epoch 0",
       [](CoordinatorCore* c) {
         v1::ReportProgressRequest req;
         req.set_worker_id("w");
         req.mutable_lease()->set_repo("github:a/b");
         return c->ReportProgress(req).status();
       },
       "lease.epoch is 0"},
      {"negative max_leases",
       [](CoordinatorCore* c) {
         v1::AcquireLeasesRequest req;
         req.set_worker_id("w");
         req.set_max_leases(-1);
         return c->AcquireLeases(req).status();
       },
       "max_leases is negative"},
      {"remove with bad slug",
       [](CoordinatorCore* c) {
         v1::RemoveRepositoriesRequest req;
         req.add_repo_slugs("svn:a/b");
         return c->RemoveRepositories(req).status();
       },
       "repo_slugs[0]: repository 'svn:a/b'"},
      {"trigger with bad mode",
       [](CoordinatorCore* c) {
         v1::TriggerCrawlRequest req;
         req.set_mode(static_cast<v1::CrawlMode>(9));
         return c->TriggerCrawl(req).status();
       },
       "mode 9"},
  };
  for (const auto& test : cases) {
    SCOPED_TRACE(test.name);
    absl::Status status = test.call(core_.get());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(test.message));
  }
  // Nothing of a rejected request was applied.
  EXPECT_EQ(Status().repositories_size(), 0);
  EXPECT_EQ(Status().workers_size(), 0);
}

// A worker (or whoever holds a lease) reporting a cursor in the future is refused: stored, it
// would hide every issue updated until then from the incremental crawls. A cursor within the
// skew allowance is taken.
TEST_F(CoreTest, CursorsInTheFutureAreRefused) {
  Add({Spec("o", "r")});
  Register("w");
  std::vector<v1::Lease> leases = Acquire("w", 1);
  ASSERT_EQ(leases.size(), 1u);
  v1::ReportProgressRequest far = Report("w", leases[0]);
  *far.mutable_cursor()->mutable_issues_since() =
      ToProto(absl::FromCivil(absl::CivilSecond(2100, 1, 1, 0, 0, 0), absl::UTCTimeZone()));
  far.set_done(true);
  auto refused = core_->ReportProgress(far);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr("cursor.issues_since 2100-01-01T00:00:00Z lies after"));
  EXPECT_FALSE(RepoStatus("github:o/r").cursor().has_issues_since()) << "nothing stored";
  v1::ReportProgressRequest comments = Report("w", leases[0]);
  *comments.mutable_cursor()->mutable_comments_since() = ToProto(clock_.Now() + absl::Hours(2));
  EXPECT_EQ(core_->ReportProgress(comments).status().code(), absl::StatusCode::kInvalidArgument);
  v1::ReportProgressRequest near = Report("w", leases[0]);
  *near.mutable_cursor()->mutable_issues_since() = ToProto(clock_.Now() + absl::Minutes(30));
  near.set_done(true);
  EXPECT_TRUE(core_->ReportProgress(near).ok());
}

TEST_F(CoreTest, GoodAddressesAreAccepted) {
  for (const char* address :
       {"", "127.0.0.1:1", "worker-0.svc.local:65535", "[::1]:8080", "unix:/tmp/sock", "in-process"}) {
    SCOPED_TRACE(address);
    EXPECT_TRUE(core_->RegisterWorker(Worker("w", address)).ok());
  }
}

// A worker listening on every interface sends ":PORT"; the coordinator takes the host from the
// gRPC peer of its RegisterWorker call.
TEST(ResolveStoreAddressTest, WildcardHostsComeFromThePeer) {
  struct Case {
    std::string address, peer, want;  // want "!" = an error
  };
  const std::vector<Case> cases = {
      {":50052", "ipv4:10.0.0.2:54321", "10.0.0.2:50052"},
      {"0.0.0.0:50052", "ipv4:10.0.0.2:54321", "10.0.0.2:50052"},
      {"[::]:50052", "ipv6:[fd00::2]:5", "[fd00::2]:50052"},
      {":5", "ipv6:%5B::1%5D:46836", "[::1]:5"},
      {":5", "ipv6:[::ffff:10.1.2.3]:7", "10.1.2.3:5"},
      // Addresses with a host are kept whatever the peer.
      {"worker-1.svc:50052", "ipv4:10.0.0.2:54321", "worker-1.svc:50052"},
      {"[fd00::7]:1", "ipv4:10.0.0.2:1", "[fd00::7]:1"},
      {"", "ipv4:10.0.0.2:1", ""},
      {"in-process", "inproc", "in-process"},
      {"unix:/run/store.sock", "unix:", "unix:/run/store.sock"},
      // No IP peer, or no port.
      {":50052", "inproc", "!"},
      {":50052", "unix:/tmp/coordinator.sock", "!"},
      {":0", "ipv4:10.0.0.2:1", "!"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.address + " from " + c.peer);
    absl::StatusOr<std::string> got = ResolveStoreAddress(c.address, c.peer);
    if (c.want == "!") {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.address));
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
  EXPECT_THAT(std::string(ResolveStoreAddress(":1", "inproc").status().message()),
              HasSubstr("--advertise-address"));
}

}  // namespace
}  // namespace issuescope::coordinator::testing
