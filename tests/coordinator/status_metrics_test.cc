// Status details (request and issue rates over the last minute, ETA, totals over crawls) and
// the Prometheus metrics page, rendered and served over HTTP and HTTPS on loopback.
#include <httplib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "coordinator/metrics.h"
#include "gtest/gtest.h"
#include "tests/common/test_certificates.h"
#include "tests/coordinator/core_fixture.h"

namespace issuescope::coordinator::testing {
namespace {

class StatusMetricsTest : public CoreTest {
 protected:
  void Progress(const v1::Lease& lease, int64_t requests, int64_t issues, bool done = false) {
    auto report = Report("w", lease);
    report.mutable_counters()->set_requests(requests);
    report.mutable_counters()->set_issues_fetched(issues);
    report.set_issues_estimated(1000);
    report.set_done(done);
    auto reported = core_->ReportProgress(report);
    ASSERT_TRUE(reported.ok()) << reported.status();
  }
};

TEST_F(StatusMetricsTest, RatesEtaAndTotals) {
  Add({Spec("o", "r")});
  Register("w");
  auto leases = Acquire("w");
  ASSERT_EQ(leases.size(), 1u);
  // 5 requests and 50 issues every 5 s for 80 s: over the last minute, 1 request/s and
  // 10 issues/s. Each report renews the lease and keeps the worker alive.
  for (int i = 1; i <= 16; ++i) {
    clock_.Advance(absl::Seconds(5));
    Progress(leases[0], 5 * i, 50 * i);
  }
  v1::RepositoryStatus status = RepoStatus("github:o/r");
  EXPECT_DOUBLE_EQ(status.request_rate(), 1.0);
  EXPECT_DOUBLE_EQ(status.issue_rate(), 10.0);
  EXPECT_EQ(status.eta_s(), 20);  // 200 issues left at 10/s
  EXPECT_EQ(status.owner(), "w");
  Progress(leases[0], 90, 950, /*done=*/true);
  status = RepoStatus("github:o/r");
  EXPECT_EQ(status.eta_s(), -1);
  EXPECT_EQ(status.totals().requests(), 90);

  // A second crawl adds to the totals.
  v1::TriggerCrawlRequest trigger;
  ASSERT_TRUE(core_->TriggerCrawl(trigger).ok());
  auto second = Acquire("w");
  ASSERT_EQ(second.size(), 1u);
  Progress(second[0], 3, 0, /*done=*/true);
  EXPECT_EQ(RepoStatus("github:o/r").totals().requests(), 93);
  EXPECT_EQ(RepoStatus("github:o/r").totals().issues_fetched(), 950);
}

TEST_F(StatusMetricsTest, RenderedInPrometheusFormat) {
  Add({Spec("o", "r"), Spec("o", "s")});
  Register("w");
  auto leases = Acquire("w", 1);
  ASSERT_EQ(leases.size(), 1u);
  Progress(leases[0], 7, 70);
  auto status = core_->GetStatus(v1::GetStatusRequest());
  ASSERT_TRUE(status.ok());
  const std::string page = RenderMetrics(*status, core_->Counters());
  for (const std::string& line : std::vector<std::string>{
           "issuescope_coordinator_repositories{phase=\"crawling\"} 1",
        "issuescope_coordinator_repositories{phase=\"pending\"} 1",
        "issuescope_coordinator_repositories{phase=\"paused\"} 0",
        "issuescope_coordinator_leases 1", "issuescope_coordinator_workers{state=\"alive\"} 1",
        "issuescope_coordinator_worker_leases{worker=\"w\"} 1",
        "issuescope_coordinator_repo_requests_total{repo=\"" + leases[0].repo_slug() + "\"} 7",
        "issuescope_coordinator_repo_issues_fetched_total{repo=\"" + leases[0].repo_slug() +
            "\"} 70",
        "issuescope_coordinator_epochs_granted_total 1",
        "issuescope_coordinator_lease_expirations_total 0",
        "# TYPE issuescope_coordinator_repo_requests_total counter"}) {
    EXPECT_NE(page.find(line + "\n"), std::string::npos) << line << "\n" << page;
  }
}

TEST_F(StatusMetricsTest, ServedOverHttp) {
  Add({Spec("o", "r")});
  MetricsServer server(CoreMetricsSnapshot(core_.get()));
  auto port = server.Start("127.0.0.1:0");
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client client("127.0.0.1", *port);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("text/plain"), std::string::npos);
  EXPECT_NE(res->body.find("issuescope_coordinator_repositories{phase=\"pending\"} 1\n"),
            std::string::npos);
  auto missing = client.Get("/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  server.Stop();
  server.Stop();  // idempotent

  MetricsServer bad(CoreMetricsSnapshot(core_.get()));
  EXPECT_EQ(bad.Start("no-port").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StatusMetricsTest, ServedOverHttpsWithACertificate) {
  if (!HasOpenssl()) GTEST_SKIP() << "no openssl command";
  const std::string dir = ::testing::TempDir() + "issuescope-metrics-tls";
  auto certs = MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  Add({Spec("o", "r")});
  ServerTlsFiles tls;
  tls.cert = certs->server_cert;
  tls.key = certs->server_key;
  MetricsServer server(CoreMetricsSnapshot(core_.get()));
  auto port = server.Start("127.0.0.1:0", tls);
  ASSERT_TRUE(port.ok()) << port.status();

  httplib::SSLClient https("127.0.0.1", *port);
  https.set_ca_cert_path(certs->ca);
  https.enable_server_certificate_verification(true);
  https.set_connection_timeout(5);
  auto res = https.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("issuescope_coordinator_repositories{phase=\"pending\"} 1\n"),
            std::string::npos);
  httplib::Client plain("127.0.0.1", *port);
  plain.set_connection_timeout(5);
  plain.set_read_timeout(5);
  auto refused = plain.Get("/metrics");
  EXPECT_FALSE(refused && refused->status == 200) << "plain HTTP answered";
  server.Stop();

  tls.key = dir + "/missing.key";
  MetricsServer bad(CoreMetricsSnapshot(core_.get()));
  EXPECT_EQ(bad.Start("127.0.0.1:0", tls).status().message(),
            "--tls-key " + tls.key + ": cannot read");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace issuescope::coordinator::testing
