// --phases end to end: beast-driver and floor-driver against a server that waits X ms before the response's head
// and Y ms between the head and the body. The mean wait is X and the mean receive Y within 10 % + 1 ms (the
// contract's bound; times are checked in attempts: timing_support.hpp); over TLS with --connection new every request
// connects and shakes hands (connect, tls > 0 in every request's sums), on a kept-alive connection after a warm-up
// none does (0); without --phases the document has no phases keys.
#include "driver_support.hpp"
#include "timing_support.hpp"
#include "tls_server.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

using driver_test::kDrivers;
using driver_test::Ran;
using driver_test::run;
using driver_test::text;
using driver_test::value;
using driver_test::workers_of;
using timing_test::Misses;

namespace {

constexpr long kWaitMs = 60;     // X
constexpr long kReceiveMs = 40;  // Y

tls_test::TlsServer::Handler delayed() {
    return [](tls_test::Conn& c) {
        const int one = 1;
        ::setsockopt(c.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        while (c.read_request()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(kWaitMs));
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
            std::this_thread::sleep_for(std::chrono::milliseconds(kReceiveMs));
            c.write("hello");
        }
    };
}

double mean_ms(const value& phases, const char* key) {
    const double n = phases.at("count").to_number<double>();
    return phases.at("sum_ns").at(key).to_number<double>() / n / 1e6;
}

std::vector<std::string> keys(const value& doc) {
    std::vector<std::string> out;
    for (const auto& k : doc.at("client").at("phases").as_array()) out.push_back(text(k));
    return out;
}

const std::vector<std::string> kKeys{"connect", "tls", "send", "wait", "receive"};

}  // namespace

TEST(DriversPhases, NewTlsConnectionsAndTheServersDelays) {
    for (const std::string& driver : kDrivers)
        for (const std::string record : {"samples", "histogram"}) {
            timing_test::attempts([&](Misses& m) {
                tls_test::TlsServer server(tls_test::tls_with(tls_test::pki().server), delayed());
                const Ran r =
                    run(driver, {"--url", server.url(), "--workers", "2", "--requests", "3", "--connection", "new",
                                 "--ca-file", tls_test::pki().ca_file, "--phases", "--record", record});
                const std::string what = driver + " " + record;
                EXPECT_EQ(keys(driver_test::parse(r.out)), kKeys) << what;
                for (const value& w : workers_of(r)) {
                    EXPECT_EQ(w.at("failure_count"), 0) << what << r.out;
                    const value& p = w.at("phases");
                    EXPECT_EQ(p.at("count"), 3) << what;
                    m.about(mean_ms(p, "wait"), kWaitMs, what + " wait");
                    m.about(mean_ms(p, "receive"), kReceiveMs, what + " receive");
                    // every request connected and shook hands: each adds more than a microsecond
                    EXPECT_GT(p.at("sum_ns").at("connect").to_number<std::int64_t>(), 3 * 1000) << what;
                    EXPECT_GT(p.at("sum_ns").at("tls").to_number<std::int64_t>(), 3 * 1000) << what;
                    EXPECT_GT(p.at("sum_ns").at("send").to_number<std::int64_t>(), 0) << what;
                    std::int64_t sum = 0;
                    for (const auto& [key, v] : p.at("sum_ns").as_object()) sum += v.to_number<std::int64_t>();
                    EXPECT_LE(sum, p.at("latency_ns").to_number<std::int64_t>()) << what;  // own time >= 0
                }
                EXPECT_EQ(server.handshakes(), 6) << what;
            });
        }
}

TEST(DriversPhases, AKeptAliveConnectionConnectsNoMore) {
    timing_test::attempts([](Misses& m) {
        for (const std::string& driver : kDrivers) {
            tls_test::TlsServer server(tls_test::tls_with(tls_test::pki().server), delayed());
            const Ran r = run(driver, {"--url", server.url(), "--workers", "1", "--requests", "2", "--warmup", "1",
                                       "--ca-file", tls_test::pki().ca_file, "--phases"});
            for (const value& w : workers_of(r)) {
                EXPECT_EQ(w.at("failure_count"), 0) << driver << r.out;
                const value& p = w.at("phases");
                EXPECT_EQ(p.at("count"), 2) << driver;
                EXPECT_EQ(p.at("sum_ns").at("connect"), 0) << driver;
                EXPECT_EQ(p.at("sum_ns").at("tls"), 0) << driver;
                m.about(mean_ms(p, "wait"), kWaitMs, driver + " wait");
            }
            EXPECT_EQ(server.handshakes(), 1) << driver;
        }
    });
}

TEST(DriversPhases, PlainHttpHasNoTls) {
    timing_test::attempts([](Misses& m) {
        for (const std::string& driver : kDrivers) {
            tls_test::TlsServer server(tls_test::ServerOptions{}, delayed());
            const Ran r = run(driver, {"--url", server.url("/", "127.0.0.1", "http"), "--workers", "1", "--requests",
                                       "2", "--phases"});
            for (const value& w : workers_of(r)) {
                const value& p = w.at("phases");
                EXPECT_EQ(p.at("count"), 2) << driver << r.out;
                EXPECT_EQ(p.at("sum_ns").at("tls"), 0) << driver;
                EXPECT_GT(p.at("sum_ns").at("connect").to_number<std::int64_t>(), 0) << driver;  // the first request's
                m.about(mean_ms(p, "receive"), kReceiveMs, driver + " receive");
            }
        }
    });
}

TEST(DriversPhases, NoPhasesKeysWithoutTheFlag) {
    for (const std::string& driver : kDrivers) {
        tls_test::TlsServer server(tls_test::ServerOptions{}, delayed());
        const Ran r = run(driver, {"--url", server.url("/", "127.0.0.1", "http"), "--workers", "1", "--requests", "1"});
        EXPECT_EQ(workers_of(r).size(), 1u) << driver;
        EXPECT_EQ(r.out.find("phases"), std::string::npos) << driver << r.out;
    }
}
