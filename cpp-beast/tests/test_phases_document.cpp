// --phases (raw/4): the document's client.phases and workers[i].phases, made of a fake client's phases: sums over the
// successful timed requests only, their latencies the latencies_ns of those requests, both --record modes; no
// phases keys without the flag, nor for a driver whose client records none; the flag takes no value.
#include "harness_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using harness_test::parse;
using harness_test::run_with;
using harness_test::json::value;

namespace {

using std::chrono::nanoseconds;

// Every third request (k = 2, 5, ...) answers 500; the others record connect 1 ns (the first request only), tls 2,
// send 3, wait 4, receive 5 ns, and dns 7 ns when `resolve`.
class PhasedClient final : public harness::Client {
public:
    explicit PhasedClient(bool resolve) : resolve_(resolve) {}
    harness::Fetch get(const std::string&) override {
        ++plain_;
        return {next() ? 200 : 500, 1};
    }
    harness::Fetch get_phases(const std::string&, harness::Phases& p) override {
        EXPECT_EQ(p.send.count(), 0);  // zeroed by the harness
        p.connect = nanoseconds(k_ == 0 ? 1 : 0);
        p.tls = nanoseconds(2);
        p.send = nanoseconds(3);
        p.wait = nanoseconds(4);
        p.receive = nanoseconds(5);
        if (resolve_ && k_ == 0) {
            p.dns = nanoseconds(7);
            p.resolved = true;
        }
        return {next() ? 200 : 500, 1};
    }
    int send(const std::string&, const std::string&, harness::Outgoing&, harness::Answer&) override { return 200; }
    long plain_ = 0;

private:
    bool next() { return k_++ % 3 != 2; }
    bool resolve_;
    long k_ = 0;
};

harness::Driver driver(std::vector<std::string> phases, bool resolve = false) {
    harness::Driver d{"test-driver", "C++", "fake", "0", "", "", [resolve](const harness::ClientOptions&) {
                          return std::make_unique<PhasedClient>(resolve);
                      }};
    d.phases = std::move(phases);
    return d;
}

const std::vector<std::string> kAll{"connect", "tls", "send", "wait", "receive"};

std::vector<std::string> keys(const value& list) {
    std::vector<std::string> out;
    for (const auto& k : list.as_array()) out.push_back(std::string(k.as_string()));
    return out;
}

}  // namespace

TEST(PhasesDocument, SumsOverTheSuccessfulRequests) {
    const auto o = run_with(driver(kAll), {"--workers", "2", "--requests", "7", "--phases"});
    ASSERT_EQ(o.status, 0) << o.err;
    const value doc = parse(o.out);
    EXPECT_EQ(doc.at("schema"), "clientbench.raw/4");
    EXPECT_EQ(keys(doc.at("client").at("phases")), kAll);  // no dns: nothing was resolved
    for (const value& w : doc.at("workers").as_array()) {
        EXPECT_EQ(w.at("failure_count"), 2);  // k = 2, 5
        const value& p = w.at("phases");
        EXPECT_EQ(p.at("count"), 5);
        // the latencies of the successful requests: every one but 2 and 5
        const auto lat = harness_test::ints(w.at("latencies_ns"));
        ASSERT_EQ(lat.size(), 7u);
        EXPECT_EQ(p.at("latency_ns"), lat[0] + lat[1] + lat[3] + lat[4] + lat[6]);
        const value& sum = p.at("sum_ns");
        EXPECT_EQ(sum.as_object().size(), 5u);
        EXPECT_EQ(sum.at("connect"), 1);
        EXPECT_EQ(sum.at("tls"), 10);
        EXPECT_EQ(sum.at("send"), 15);
        EXPECT_EQ(sum.at("wait"), 20);
        EXPECT_EQ(sum.at("receive"), 25);
    }
}

TEST(PhasesDocument, WithHistogramsToo) {
    const auto o =
        run_with(driver(kAll, true), {"--workers", "1", "--requests", "4", "--phases", "--record", "histogram"});
    ASSERT_EQ(o.status, 0) << o.err;
    const value doc = parse(o.out);
    EXPECT_EQ(keys(doc.at("client").at("phases")),
              (std::vector<std::string>{"dns", "connect", "tls", "send", "wait", "receive"}));
    const value& w = doc.at("workers").at(0);
    EXPECT_FALSE(w.as_object().contains("latencies_ns"));
    const value& p = w.at("phases");
    EXPECT_EQ(p.at("count"), 3);
    EXPECT_GT(p.at("latency_ns").to_number<std::int64_t>(), 0);
    EXPECT_EQ(p.at("sum_ns").at("dns"), 7);
    EXPECT_EQ(p.at("sum_ns").at("wait"), 12);
}

TEST(PhasesDocument, NoPhasesKeysWithoutTheFlag) {
    const auto o = run_with(driver(kAll), {"--workers", "1", "--requests", "3"});
    ASSERT_EQ(o.status, 0) << o.err;
    const value doc = parse(o.out);
    EXPECT_EQ(doc.at("schema"), "clientbench.raw/4");
    EXPECT_FALSE(doc.at("client").as_object().contains("phases"));
    EXPECT_FALSE(doc.at("workers").at(0).as_object().contains("phases"));
    EXPECT_EQ(o.out.find("phases"), std::string::npos);
}

TEST(PhasesDocument, ADriverThatRecordsNoneAcceptsTheFlag) {
    const auto o = run_with(driver({}), {"--workers", "1", "--requests", "3", "--phases"});
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(o.out.find("phases"), std::string::npos);
    const value doc = parse(o.out);
    EXPECT_EQ(doc.at("workers").at(0).at("failure_count"), 1);
}

TEST(PhasesDocument, TheFlagTakesNoValue) {
    const auto o = run_with(driver(kAll), {"--phases=yes"});
    EXPECT_EQ(o.status, 2);
    EXPECT_NE(o.err.find("--phases: takes no value"), std::string::npos) << o.err;
}
