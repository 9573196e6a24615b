// The drivers end to end (beast-driver, floor-driver: the programs, run as the runner runs them) against the
// in-test servers: uploads (POST / PUT, plain and TLS) whose body the server checks and whose /upload line the
// driver checks, a wrong line counted as a failure, the open loop's schedule, its stop at --duration, and a
// usage error. Nothing here asserts a speed.
#include "driver_support.hpp"
#include "test_server.hpp"
#include "tls_server.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using driver_test::kDrivers;
using driver_test::ok_response;
using driver_test::parse;
using driver_test::pattern;
using driver_test::Ran;
using driver_test::run;
using driver_test::sha256_line;
using driver_test::text;
using driver_test::upload_handler;
using driver_test::value;
using driver_test::workers_of;

TEST(Drivers, UploadTheBodyAndCheckTheLine) {
    for (const std::string& driver : kDrivers)
        for (const std::string method : {"POST", "PUT"}) {
            test_support::TestServer server(upload_handler<test_support::Conn>());
            const Ran r = run(driver, {"--url", server.url("/upload"), "--workers", "2", "--requests", "3", "--warmup",
                                       "1", "--method", method, "--body-size", "1000"});
            for (const value& w : workers_of(r)) {
                EXPECT_EQ(w.at("count"), 3) << driver << " " << method;
                EXPECT_EQ(w.at("failure_count"), 0) << driver << " " << method << r.out;
                EXPECT_EQ(w.at("bytes"), 3 * 69);  // "1000 " and 64 hex digits
            }
            const auto requests = server.requests();
            ASSERT_EQ(requests.size(), 8u) << driver;
            for (const std::string& request : requests) {
                EXPECT_EQ(request.rfind(method + " /upload HTTP/1.1\r\n", 0), 0u) << driver << request.substr(0, 80);
                EXPECT_EQ(request.substr(request.find("\r\n\r\n") + 4), pattern(1000)) << driver;
            }
        }
}

TEST(Drivers, UploadALargeBody) {
    // larger than the floor's pre-built request: its body is written separately
    for (const std::string& driver : kDrivers) {
        test_support::TestServer server(upload_handler<test_support::Conn>());
        const Ran r = run(driver, {"--url", server.url("/upload"), "--workers", "1", "--requests", "2", "--method",
                                   "POST", "--body-size", "3000000"});
        for (const value& w : workers_of(r)) EXPECT_EQ(w.at("failure_count"), 0) << driver << r.out.substr(0, 2000);
        for (const std::string& request : server.requests())
            EXPECT_EQ(request.substr(request.find("\r\n\r\n") + 4), pattern(3000000)) << driver;
    }
}

TEST(Drivers, AWrongLineIsAFailure) {
    for (const std::string& driver : kDrivers) {
        test_support::TestServer server(upload_handler<test_support::Conn>("1000 0123"));
        const Ran r = run(driver, {"--url", server.url("/upload"), "--workers", "1", "--requests", "2", "--method",
                                   "POST", "--body-size", "1000"});
        for (const value& w : workers_of(r)) {
            EXPECT_EQ(w.at("failure_count"), 2) << driver;
            EXPECT_EQ(text(w.at("failures").at(0).at("reason")),
                      "Error: upload digest mismatch: expected '" + sha256_line(pattern(1000)) +
                          "' (or the 1000 bytes sent, echoed), got '1000 0123'")
                << driver;
        }
    }
}

TEST(Drivers, UploadOverTls) {
    for (const std::string& driver : kDrivers) {
        tls_test::TlsServer server(tls_test::tls_with(tls_test::pki().server), upload_handler<tls_test::Conn>());
        const Ran r = run(driver, {"--url", server.url("/upload"), "--workers", "2", "--requests", "2", "--method",
                                   "PUT", "--body-size", "5000", "--ca-file", tls_test::pki().ca_file});
        for (const value& w : workers_of(r)) EXPECT_EQ(w.at("failure_count"), 0) << driver << r.out.substr(0, 2000);
        EXPECT_EQ(server.requests().size(), 4u) << driver;
    }
}

TEST(Drivers, FloorResendsOnlyAnIdempotentUploadOnAStaleConnection) {
    // the server closes every connection after one response (without saying so): the floor's next request
    // meets a closed connection after writing it; a PUT is sent again on a new one, a POST may have been
    // processed, so it fails
    const auto one_per_connection = [](test_support::Conn& c) {
        std::string request;
        if (c.read_request(&request)) c.write(ok_response(sha256_line(request.substr(request.find("\r\n\r\n") + 4))));
        c.close();
    };
    for (const std::string method : {"PUT", "POST"}) {
        test_support::TestServer server(one_per_connection);
        const Ran r = run(FLOOR_DRIVER, {"--url", server.url("/upload"), "--workers", "1", "--requests", "3",
                                         "--method", method, "--body-size", "10"});
        for (const value& w : workers_of(r)) {
            if (method == "PUT") {
                EXPECT_EQ(w.at("failure_count"), 0) << r.out;
            } else {
                EXPECT_EQ(w.at("failure_count"), 1) << r.out;
                EXPECT_EQ(text(w.at("failures").at(0).at("reason")).rfind("ConnectionError: ", 0), 0u) << r.out;
            }
        }
    }
}

TEST(Drivers, FollowTheOpenLoopsSchedule) {
    for (const std::string& driver : kDrivers) {
        test_support::TestServer server(test_support::answer_all(test_support::kHello));
        const Ran r = run(driver, {"--url", server.url(), "--workers", "2", "--rate", "400", "--duration", "0.25"});
        const std::vector<value> workers = workers_of(r);
        ASSERT_EQ(workers.size(), 2u) << driver;
        for (const value& w : workers) {
            // every worker's schedule has 50 requests before 0.25 s: sent or missed
            EXPECT_EQ(w.at("count").to_number<long>() + w.at("missed").to_number<long>(), 50) << driver;
            EXPECT_EQ(w.at("failure_count"), 0) << driver;
            EXPECT_EQ(w.at("intended_ns").as_array().size(), w.at("start_ns").as_array().size());
        }
    }
}

TEST(Drivers, StopByThemselvesAtTheDuration) {
    for (const std::string& driver : kDrivers) {
        test_support::TestServer server([](test_support::Conn& c) {
            while (c.read_request()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(300));
                c.write(test_support::kHello);
            }
        });
        const Ran r = run(
            driver, {"--url", server.url(), "--workers", "1", "--rate", "100", "--duration", "0.2", "--timeout", "5"});
        for (const value& w : workers_of(r)) {
            EXPECT_EQ(w.at("count"), 1) << driver;  // at 0 s, answered at 0.3 s: after D
            EXPECT_EQ(w.at("missed"), 19) << driver;
            EXPECT_EQ(w.at("failure_count"), 0) << driver;
        }
    }
}

TEST(Drivers, GetIsUnchanged) {
    for (const std::string& driver : kDrivers) {
        test_support::TestServer server(test_support::answer_all(test_support::kHello));
        const Ran r = run(driver, {"--url", server.url(), "--workers", "2", "--requests", "3"});
        for (const value& w : workers_of(r)) {
            EXPECT_EQ(w.at("bytes"), 15) << driver;
            EXPECT_EQ(w.at("failure_count"), 0) << driver;
        }
        for (const std::string& request : server.requests())
            EXPECT_EQ(request.rfind("GET / HTTP/1.1\r\n", 0), 0u) << driver << request;
    }
}

// --client-scope shared: one client, its pool bounded to W connections, serves every worker; the document says
// so. GET and uploads (each thread checks its own response).
TEST(Drivers, BeastSharesOneClientBetweenTheWorkers) {
    for (const std::string method : {"GET", "POST"}) {
        test_support::TestServer server([](test_support::Conn& c) {
            std::string request;
            while (c.read_request(&request)) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the workers overlap
                const std::string body = request.substr(request.find("\r\n\r\n") + 4);
                c.write(ok_response(request.rfind("GET", 0) == 0 ? "hello" : sha256_line(body)));
            }
        });
        std::vector<std::string> args{
            "--url", server.url("/upload"), "--workers", "4",        "--requests", "25", "--warmup",
            "2",     "--client-scope",      "shared",    "--method", method};
        if (method == "POST") args.insert(args.end(), {"--body-size", "3000"});
        const Ran r = run(BEAST_DRIVER, args);
        const auto workers = workers_of(r);
        ASSERT_EQ(workers.size(), 4u) << r.err;
        for (const value& w : workers) {
            EXPECT_EQ(w.at("count"), 25) << method;
            EXPECT_EQ(w.at("failure_count"), 0) << method << r.out.substr(0, 2000);
            EXPECT_EQ(w.at("bytes"), 25 * (method == "GET" ? 5 : 69)) << method;
        }
        const value doc = parse(r.out);
        EXPECT_EQ(text(doc.at("workload").at("client_scope")), "shared");
        EXPECT_EQ(text(doc.at("workload").at("http")), "1.1");
        EXPECT_EQ(text(doc.at("client").at("protocol")), "HTTP/1.1");
        EXPECT_EQ(server.requests().size(), 4u * 27u) << method;
        EXPECT_GE(server.accepts(), 1) << method;
        EXPECT_LE(server.accepts(), 4) << method;  // max_connections = W
    }
}

TEST(Drivers, SharedOverTls) {
    tls_test::TlsServer server(tls_test::tls_with(tls_test::pki().server), upload_handler<tls_test::Conn>());
    const Ran r =
        run(BEAST_DRIVER, {"--url", server.url("/upload"), "--workers", "3", "--requests", "10", "--method", "PUT",
                           "--body-size", "500", "--ca-file", tls_test::pki().ca_file, "--client-scope", "shared"});
    for (const value& w : workers_of(r)) EXPECT_EQ(w.at("failure_count"), 0) << r.out.substr(0, 2000);
    EXPECT_EQ(server.requests().size(), 30u);
    EXPECT_FALSE(parse(r.out).at("client").at("tls").is_null());
}

TEST(Drivers, PerWorkerAndHttp11AreTheDefaults) {
    for (const std::string& driver : kDrivers) {
        test_support::TestServer server(test_support::answer_all(test_support::kHello));
        const Ran r = run(driver, {"--url", server.url(), "--workers", "2", "--requests", "2", "--http", "1.1",
                                   "--client-scope", "per-worker"});
        for (const value& w : workers_of(r)) EXPECT_EQ(w.at("failure_count"), 0) << driver;
        const value doc = parse(r.out);
        EXPECT_EQ(text(doc.at("workload").at("client_scope")), "per-worker") << driver;
        EXPECT_EQ(text(doc.at("workload").at("http")), "1.1") << driver;
        EXPECT_EQ(text(doc.at("client").at("protocol")), "HTTP/1.1") << driver;
        EXPECT_EQ(server.accepts(), 2) << driver;
    }
}

// What a driver cannot do at all: exit 3, nothing on stdout, one line on stderr starting "unsupported: "
// (docs/raw-format.md); nothing is sent.
TEST(Drivers, UnsupportedModesExit3WithOneLine) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
        {BEAST_DRIVER, {"--http", "2"}},
        {FLOOR_DRIVER, {"--http", "2"}},
        {FLOOR_DRIVER, {"--client-scope", "shared"}},
    };
    for (const auto& [driver, flags] : cases) {
        test_support::TestServer server(test_support::answer_all(test_support::kHello));
        std::vector<std::string> args{"--url", server.url(), "--workers", "2", "--requests", "2"};
        args.insert(args.end(), flags.begin(), flags.end());
        const Ran r = run(driver, args);
        EXPECT_EQ(r.status, 3) << driver << " " << flags[0] << r.err;
        EXPECT_TRUE(r.out.empty()) << driver;
        EXPECT_EQ(r.err.rfind("unsupported: ", 0), 0u) << driver << r.err;
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << driver << r.err;
        EXPECT_EQ(server.accepts(), 0) << driver;
    }
    EXPECT_EQ(run(BEAST_DRIVER, {"--url", "http://127.0.0.1:9/", "--http", "2"}).err,
              "unsupported: HTTP/2 (Boost.Beast speaks HTTP/1.1)\n");
    // HTTP/3: unsupported over https (before any connection: port 9 has no server), bad usage over http
    for (const std::string& driver : kDrivers) {
        const Ran h3 = run(driver, {"--url", "https://127.0.0.1:9/", "--http", "3"});
        EXPECT_EQ(h3.status, 3) << driver << h3.err;
        EXPECT_TRUE(h3.out.empty()) << driver;
        EXPECT_EQ(h3.err.rfind("unsupported: HTTP/3 (", 0), 0u) << driver << h3.err;
        const Ran plain = run(driver, {"--url", "http://127.0.0.1:9/", "--http", "3"});
        EXPECT_EQ(plain.status, 2) << driver << plain.err;
        EXPECT_NE(plain.err.find("--http: 3 is HTTP/3 over QUIC"), std::string::npos) << driver << plain.err;
    }
}

TEST(Drivers, UsageErrorsExit2WithOneLine) {
    for (const std::string& driver : kDrivers)
        for (const std::vector<std::string>& flags :
             {std::vector<std::string>{"--rate", "0"}, std::vector<std::string>{"--body-size", "10"},
              std::vector<std::string>{"--client-scope", "global"}, std::vector<std::string>{"--http", "4"},
              std::vector<std::string>{"--connection", "new", "--client-scope", "shared"},
              std::vector<std::string>{"--rate", "-1", "--http", "2"}, std::vector<std::string>{"--chunk-size", "0"},
              std::vector<std::string>{"--upload", "stream"}, std::vector<std::string>{"--targets", "/no/such/file"},
              std::vector<std::string>{"--download", "lazy"}}) {
            const Ran r = run(driver, [&] {
                std::vector<std::string> args{"--url", "http://127.0.0.1:9/"};
                args.insert(args.end(), flags.begin(), flags.end());
                return args;
            }());
            EXPECT_EQ(r.status, 2) << driver;
            EXPECT_TRUE(r.out.empty()) << driver;
            EXPECT_NE(r.err.find("error: " + flags[0]), std::string::npos) << driver << r.err;
            EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << driver << r.err;
        }
}
