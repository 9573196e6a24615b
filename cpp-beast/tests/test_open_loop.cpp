// The open loop through harness::main with fake clients on the real clock: the document's intended times,
// late starts, missed requests and the stop at --duration, and the usage errors of the contract's flags
// (docs/raw-format.md). Nothing here asserts a speed: fake requests that sleep make the lateness certain.
#include "harness_support.hpp"
#include "options.hpp"
#include "schedule.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

using harness_test::ints;
using harness_test::ok;
using harness_test::parse;
using harness_test::run_driver;
using harness_test::run_main;
using harness_test::scripted;
using harness_test::Step;
using harness_test::json::value;

namespace {

Step sleeping(std::chrono::milliseconds ms) {
    return [ms] {
        std::this_thread::sleep_for(ms);
        return harness::Fetch{200, 1};
    };
}

}  // namespace

TEST(OpenLoopRun, EveryWorkerFollowsItsUniformSchedule) {
    int rc = -1;
    const std::string doc =
        run_driver(scripted({ok()}), {"--workers", "2", "--rate", "4000", "--duration", "0.05"}, &rc);
    EXPECT_EQ(rc, 0);
    const value v = parse(doc);
    EXPECT_NE(doc.find("\"requests\":null,\"duration_s\":0.05,"), std::string::npos) << doc;
    // the seed only for a Poisson schedule: a uniform one draws nothing
    EXPECT_NE(doc.find("\"loop\":\"open\",\"rate\":4000.0,\"arrival\":\"uniform\",\"seed\":null,"), std::string::npos);
    const auto& workers = v.at("workers").as_array();
    ASSERT_EQ(workers.size(), 2u);
    for (long w = 0; w < 2; ++w) {
        const value& worker = workers[static_cast<std::size_t>(w)];
        const long count = worker.at("count").to_number<long>();
        // each worker's schedule before 50 ms: (w + 2k) / 4000 s for k < 100
        EXPECT_EQ(count + worker.at("missed").to_number<long>(), 100) << w;
        const auto intended = ints(worker.at("intended_ns"));
        const auto starts = ints(worker.at("start_ns"));
        ASSERT_EQ(intended.size(), static_cast<std::size_t>(count));
        ASSERT_EQ(starts.size(), static_cast<std::size_t>(count));
        for (long k = 0; k < count; ++k) {
            EXPECT_EQ(intended[k], harness::uniform_intended_ns(4000, 2, w, k));
            EXPECT_GE(starts[k], intended[k]);
            EXPECT_LT(starts[k], 50000000);
        }
    }
}

TEST(OpenLoopRun, PoissonSchedulesAreSeeded) {
    const value v = parse(run_driver(scripted({ok()}), {"--workers", "2", "--rate", "4000", "--requests", "20",
                                                        "--arrival", "poisson", "--seed", "5"}));
    EXPECT_EQ(v.at("workload").at("seed"), 5);
    for (long w = 0; w < 2; ++w) {
        const value& worker = v.at("workers").at(static_cast<std::size_t>(w));
        EXPECT_EQ(worker.at("count"), 20);
        EXPECT_EQ(worker.at("missed"), 0);
        harness::Schedule schedule(harness::Arrival::poisson, 4000, 2, w, 5);
        for (const std::int64_t intended : ints(worker.at("intended_ns"))) EXPECT_EQ(intended, schedule.next());
    }
}

TEST(OpenLoopRun, SlowRequestsStartLateAndAreChargedFromTheirIntendedTime) {
    // every request takes >= 3 ms, the schedule wants one per ms: each after the first starts late
    const value v = parse(run_driver(scripted({sleeping(std::chrono::milliseconds(3))}),
                                     {"--workers", "1", "--rate", "1000", "--requests", "5"}));
    const value& w = v.at("workers").at(0);
    EXPECT_EQ(w.at("count"), 5);
    EXPECT_EQ(w.at("late"), 4);
    const auto intended = ints(w.at("intended_ns"));
    const auto starts = ints(w.at("start_ns"));
    const auto service = ints(w.at("latencies_ns"));
    for (std::size_t k = 1; k < 5; ++k) {
        EXPECT_GE(starts[k], starts[k - 1] + service[k - 1]);  // back to back, never overlapping
        EXPECT_GE(starts[k] + service[k] - intended[k], 3000000 * static_cast<std::int64_t>(k + 1) - 1000000 * k);
    }
}

TEST(OpenLoopRun, StopsByItselfAtTheDuration) {
    // the first request (at 0) lasts 300 ms, past D = 200 ms: the other 19 of the schedule are missed
    const value v = parse(run_driver(scripted({sleeping(std::chrono::milliseconds(300))}),
                                     {"--workers", "1", "--rate", "100", "--duration", "0.2"}));
    const value& w = v.at("workers").at(0);
    EXPECT_EQ(w.at("count"), 1);
    EXPECT_EQ(w.at("missed"), 19);
    EXPECT_EQ(w.at("late"), 0);
    EXPECT_EQ(w.at("failure_count"), 0);
}

TEST(OpenLoopRun, HistogramsHaveTheCorrectedLatency) {
    const Step fail = [] { return harness::Fetch{500, 0}; };
    const value v = parse(run_driver(scripted({sleeping(std::chrono::milliseconds(2)), fail}),
                                     {"--workers", "1", "--rate", "1000", "--requests", "6", "--record", "histogram"}));
    const value& h = v.at("workers").at(0).at("histograms");
    for (const char* kind : {"service", "corrected"}) {
        std::int64_t total = 0;
        for (const value& bucket : h.at(kind).at("counts").as_array()) total += bucket.at(1).to_number<std::int64_t>();
        EXPECT_EQ(total, 3) << kind;  // the successful requests only
    }
    // a request's corrected latency (from its intended start) is never below its service time
    const auto max_of = [&h](const char* kind) { return h.at(kind).at("counts").as_array().back().at(0).as_int64(); };
    EXPECT_GE(max_of("corrected"), max_of("service"));
}

TEST(OpenLoopRun, FailuresOfASetupAreCountedOnSchedule) {
    const auto throws = [](const harness::ClientOptions&) -> std::unique_ptr<harness::Client> {
        throw std::runtime_error("no sockets");
    };
    const value v = parse(run_driver(throws, {"--workers", "2", "--rate", "2000", "--requests", "3"}));
    for (const value& w : v.at("workers").as_array()) {
        EXPECT_EQ(w.at("count"), 3);
        EXPECT_EQ(w.at("failure_count"), 3);
        EXPECT_EQ(w.at("failures").at(0).at("reason"), "Error: std::runtime_error: no sockets");
    }
}

// ---- usage errors: exit 2, nothing on stdout, one line on stderr naming the flag -----------------------

TEST(Usage, BadOpenLoopAndBodyFlagsNameTheFlag) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"--rate", "0"}, "--rate"},
        {{"--rate", "-5"}, "--rate"},
        {{"--rate", "abc"}, "--rate"},
        {{"--rate", "nan"}, "--rate"},
        {{"--rate", "inf"}, "--rate"},
        {{"--rate", ""}, "--rate"},
        {{"--rate", "1e400"}, "--rate"},
        {{"--rate"}, "--rate"},
        {{"--rate", "2000001", "--workers", "2"}, "--rate"},  // finer than 1 µs per worker
        {{"--workers", "1", "--rate=1000000.5"}, "--rate"},
        {{"--duration", "1"}, "--duration"},  // without --rate
        {{"--rate", "10", "--duration", "1", "--requests", "5"}, "--duration"},
        {{"--requests", "5", "--rate", "10", "--duration", "1"}, "--duration"},
        {{"--rate", "10", "--duration", "0"}, "--duration"},
        {{"--rate", "10", "--duration", "-1"}, "--duration"},
        {{"--rate", "10", "--duration", "soon"}, "--duration"},
        {{"--rate", "10", "--arrival", "bursty"}, "--arrival"},
        {{"--rate", "10", "--seed", "-1"}, "--seed"},
        {{"--rate", "10", "--seed", "1.5"}, "--seed"},
        {{"--rate", "10", "--seed", "18446744073709551616"}, "--seed"},
        {{"--method", "DELETE"}, "--method"},
        {{"--method", "post"}, "--method"},
        {{"--method", "POST", "--body-size", "-1"}, "--body-size"},
        {{"--method", "POST", "--body-size", "1073741825"}, "--body-size"},
        {{"--method", "POST", "--body-size", "99999999999999999999999"}, "--body-size"},
        {{"--method", "POST", "--body-size", "1k"}, "--body-size"},
        {{"--body-size", "10"}, "--body-size"},  // a GET sends no body
        {{"--method", "GET", "--body-size", "1"}, "--body-size"},
        {{"--record", "everything"}, "--record"},
        // the contract's rules (docs/raw-format.md, "Command line")
        {{"--arrival", "poisson"}, "--arrival"},  // without --rate
        {{"--seed", "3"}, "--seed"},
        {{"--timeout", "0"}, "--timeout"},
        {{"--timeout", "86401"}, "--timeout"},
        {{"--workers", "0"}, "--workers"},
    };
    for (const auto& [flags, flag] : cases) {
        const harness_test::Outcome o = run_main(scripted({ok()}), flags);
        std::string args;
        for (const auto& f : flags) args += f + " ";
        EXPECT_EQ(o.status, 2) << args;
        EXPECT_TRUE(o.out.empty()) << args << o.out;
        EXPECT_EQ(o.err.rfind("test-driver: error: " + flag, 0), 0u) << args << o.err;
        EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << args << o.err;  // one line
    }
}

TEST(Usage, AnUnusableUrlIsBadUsage) {
    for (const char* url : {"ftp://127.0.0.1:9/", "http://", "127.0.0.1:9", "http://h:0/", "http://h:65536/",
                            "http://h /", "http://[::1/", "x"}) {
        const harness_test::Outcome o = run_main(scripted({ok()}), {}, url);
        EXPECT_EQ(o.status, 2) << url;
        EXPECT_TRUE(o.out.empty()) << url;
        EXPECT_EQ(o.err.rfind("test-driver: error: --url", 0), 0u) << url << o.err;
        EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;
    }
    // usable: what a client then refuses (user info, for the beast client) is a counted failure, not bad usage
    for (const char* url : {"HTTP://[::1]:9/x?y", "https://example.com", "http://h:/", "http://user@127.0.0.1:9/"})
        EXPECT_NO_THROW(harness::check_url(url)) << url;
}

TEST(Usage, EdgesThatAreAccepted) {
    const auto parsed = [](std::vector<std::string> flags) {
        std::vector<std::string> args{"driver", "--url", "http://127.0.0.1:9/"};
        args.insert(args.end(), flags.begin(), flags.end());
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        return harness::parse_args(static_cast<int>(argv.size()), argv.data()).value();
    };
    EXPECT_EQ(parsed({"--method", "POST", "--body-size", "1073741824"}).body_size, harness::kMaxBodySize);
    EXPECT_EQ(parsed({"--method", "PUT", "--body-size", "0"}).body_size, 0u);
    EXPECT_EQ(parsed({"--method", "GET", "--body-size", "0"}).method, "GET");
    EXPECT_EQ(*parsed({"--rate", "2000000", "--workers", "2"}).rate, 2000000.0);
    EXPECT_EQ(parsed({"--timeout", "86400"}).timeout, 86400.0);
    EXPECT_EQ(parsed({"--rate", "1", "--seed", "7"}).arrival, harness::Arrival::uniform);  // accepted, unused
    const harness::Options o = parsed({"--rate", "0.5", "--duration", "2.5", "--arrival", "poisson", "--seed",
                                       "18446744073709551615", "--record", "histogram"});
    EXPECT_TRUE(o.open());
    EXPECT_EQ(*o.duration_s, 2.5);
    EXPECT_EQ(o.arrival, harness::Arrival::poisson);
    EXPECT_EQ(o.seed, 18446744073709551615u);
    EXPECT_TRUE(o.histogram);
    const harness::Options closed = parsed({});
    EXPECT_FALSE(closed.open());
    EXPECT_EQ(closed.requests, 100);
    EXPECT_EQ(closed.method, "GET");
    EXPECT_FALSE(closed.histogram);
}

TEST(Usage, HelpListsTheContractsFlags) {
    const std::string out = run_driver(scripted({ok()}), {"--help"});
    for (const char* flag : {"--rate R", "--arrival A", "--seed S", "--duration SECONDS", "--method M",
                             "--body-size BYTES", "--record R", "[--requests N | --duration SECONDS]"})
        EXPECT_NE(out.find(flag), std::string::npos) << flag;
}
