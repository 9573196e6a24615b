// The drivers end to end with streamed bodies, the echo answer and --targets (docs/raw-format.md, "Streamed
// bodies" and "Targets"): chunked uploads the server reads chunk by chunk, echoes right and wrong, streamed
// downloads, the bytes of a targets file cycled per worker, and the memory a streamed body saves.
#include "driver_support.hpp"
#include "test_server.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

using driver_test::kDrivers;
using driver_test::ok_response;
using driver_test::parse;
using driver_test::pattern;
using driver_test::Ran;
using driver_test::read_body;
using driver_test::run;
using driver_test::sha256_line;
using driver_test::text;
using driver_test::upload_handler;
using driver_test::value;
using driver_test::workers_of;

namespace {

// Under AddressSanitizer freed memory stays resident a while (its quarantine): a peak RSS then says nothing of
// what a body costs, so the sanitized build runs the exchanges for their memory checks and compares no RSS
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Answers every request with its body (POST /echo), after reading it whole; logs its chunks' sizes.
struct Echo {
    std::mutex mutex;
    std::vector<std::vector<std::size_t>> chunks;  // per request (empty: not chunked)
    std::vector<std::string> bodies;
    std::string corrupt;  // when set: answered instead of the body (a wrong echo of the same length)

    std::function<void(test_support::Conn&)> handler() {
        return [this](test_support::Conn& c) {
            std::string request;
            std::string body;
            std::vector<std::size_t> sizes;
            while (c.read_request(&request) && read_body(c, request, body, &sizes)) {
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    chunks.push_back(sizes);
                    bodies.push_back(body);
                }
                c.write(ok_response(corrupt.empty() ? body : corrupt));
                sizes.clear();
            }
        };
    }
};

std::vector<std::string> args(const std::string& url, std::vector<std::string> flags) {
    std::vector<std::string> all{"--url", url, "--workers", "2", "--requests", "3"};
    all.insert(all.end(), flags.begin(), flags.end());
    return all;
}

}  // namespace

TEST(DriverStreams, AStreamedUploadIsSentInChunks) {
    for (const std::string& driver : kDrivers)
        for (const std::string method : {"POST", "PUT"}) {
            test_support::TestServer server(upload_handler<test_support::Conn>());
            const Ran r = run(driver, args(server.url("/upload"), {"--method", method, "--body-size", "100000",
                                                                   "--upload", "stream", "--chunk-size", "4096"}));
            for (const value& w : workers_of(r)) {
                EXPECT_EQ(w.at("failure_count"), 0) << driver << " " << method << r.out.substr(0, 1000);
                EXPECT_EQ(w.at("bytes"), 3 * sha256_line(pattern(100000)).size()) << driver;
            }
            EXPECT_EQ(text(parse(r.out).at("workload").at("upload")), "stream");
            const auto requests = server.requests();
            ASSERT_EQ(requests.size(), 6u) << driver;
            for (const std::string& request : requests) {
                EXPECT_EQ(request.rfind(method + " /upload HTTP/1.1\r\n", 0), 0u) << driver;
                EXPECT_NE(request.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << driver << request;
                EXPECT_EQ(request.find("Content-Length"), std::string::npos) << driver << request;
            }
        }
}

TEST(DriverStreams, TheChunksAreOfC) {
    for (const std::string& driver : kDrivers) {
        Echo echo;
        test_support::TestServer server(echo.handler());
        const Ran r = run(driver, args(server.url("/echo"), {"--method", "POST", "--body-size", "10000", "--upload",
                                                             "stream", "--chunk-size", "3000"}));
        for (const value& w : workers_of(r)) {
            EXPECT_EQ(w.at("failure_count"), 0) << driver << r.out.substr(0, 1000);
            EXPECT_EQ(w.at("bytes"), 30000) << driver;  // the body echoed: right
        }
        ASSERT_EQ(echo.bodies.size(), 6u) << driver;
        for (std::size_t i = 0; i < 6; ++i) {
            EXPECT_EQ(echo.bodies[i], pattern(10000)) << driver;
            EXPECT_EQ(echo.chunks[i], (std::vector<std::size_t>{3000, 3000, 3000, 1000})) << driver;
        }
    }
}

TEST(DriverStreams, AnEchoIsRightAndAWrongOneOfItsLengthAMismatch) {
    for (const std::string& driver : kDrivers)
        for (const std::string upload : {"whole", "stream"})
            for (const std::string download : {"whole", "stream"})
                for (const bool wrong : {false, true}) {
                    Echo echo;
                    if (wrong) {
                        echo.corrupt = pattern(5000);
                        echo.corrupt[4321] = 'Z';
                    }
                    test_support::TestServer server(echo.handler());
                    const Ran r =
                        run(driver, args(server.url("/echo"), {"--method", "PUT", "--body-size", "5000", "--upload",
                                                               upload, "--download", download, "--chunk-size", "512"}));
                    const std::string what = driver + " " + upload + " " + download + (wrong ? " wrong" : "");
                    for (const value& w : workers_of(r)) {
                        EXPECT_EQ(w.at("bytes"), 15000) << what;
                        EXPECT_EQ(w.at("failure_count"), wrong ? 3 : 0) << what << r.out.substr(0, 1000);
                        if (wrong) {
                            EXPECT_EQ(text(w.at("failures").at(0).at("reason"))
                                          .rfind("Error: upload digest mismatch: expected '5000 ", 0),
                                      0u)
                                << what;
                        }
                    }
                    const value doc = parse(r.out);
                    EXPECT_EQ(text(doc.at("workload").at("download")), download) << what;
                    EXPECT_EQ(doc.at("workload").at("chunk_size"), 512) << what;
                }
}

TEST(DriverStreams, AStreamedDownloadCountsEveryByte) {
    const std::string body = pattern(300000);
    for (const std::string& driver : kDrivers) {
        test_support::TestServer server(test_support::answer_all(ok_response(body)));
        const Ran r = run(driver, args(server.url("/bytes"), {"--download", "stream", "--chunk-size", "1000"}));
        for (const value& w : workers_of(r)) {
            EXPECT_EQ(w.at("failure_count"), 0) << driver;
            EXPECT_EQ(w.at("bytes"), 900000) << driver;
        }
        for (const std::string& request : server.requests())
            EXPECT_EQ(request.rfind("GET /bytes HTTP/1.1\r\n", 0), 0u) << driver << request;
    }
    // a wrong upload answer read in 4-byte chunks: still a mismatch
    for (const std::string& driver : kDrivers) {
        test_support::TestServer server(upload_handler<test_support::Conn>("30 not the line at all"));
        const Ran r = run(driver, args(server.url("/upload"), {"--method", "POST", "--body-size", "30", "--download",
                                                               "stream", "--chunk-size", "4"}));
        for (const value& w : workers_of(r)) {
            EXPECT_EQ(w.at("failure_count"), 3) << driver;
            EXPECT_EQ(text(w.at("failures").at(0).at("reason")),
                      "Error: upload digest mismatch: expected '" + sha256_line(pattern(30)) +
                          "' (or the 30 bytes sent, echoed), got '30 not the line at all'")
                << driver;
        }
    }
}

TEST(DriverStreams, TargetsAreCycledPerWorker) {
    char body_path[] = "/tmp/driver-targets-body-XXXXXX";
    char list_path[] = "/tmp/driver-targets-XXXXXX";
    for (char* path : {body_path, list_path}) {
        const int fd = ::mkstemp(path);
        ASSERT_GE(fd, 0);
        ::close(fd);
    }
    std::ofstream(body_path, std::ios::binary) << "seven b";
    for (const std::string& driver : kDrivers)
        for (const std::string upload : {"whole", "stream"}) {
            test_support::TestServer server([](test_support::Conn& c) {
                std::string request;
                std::string body;
                while (c.read_request(&request) && read_body(c, request, body)) {
                    const bool ten = request.rfind("GET /bytes/10 ", 0) == 0;
                    const bool upload = request.rfind("POST /upload ", 0) == 0;
                    c.write(ok_response(ten ? pattern(10) : upload ? sha256_line(body) : pattern(2000)));
                }
            });
            std::ofstream(list_path) << "GET " << server.url("/bytes/10") << "\n# a comment\n\nGET "
                                     << server.url("/bytes/2000") << "\nPOST " << server.url("/upload") << " @"
                                     << body_path << "\n";
            const Ran r =
                run(driver, {"--url", server.url("/bytes/10"), "--workers", "2", "--requests", "5", "--warmup", "1",
                             "--targets", list_path, "--upload", upload, "--chunk-size", "3"});
            // worker 0 sends targets 0 1 2 0 1, worker 1 sends 1 2 0 1 2 (warm-up: target 0, target 1)
            const std::size_t line = sha256_line("seven b").size();
            std::vector<std::int64_t> bytes;
            for (const value& w : workers_of(r)) {
                EXPECT_EQ(w.at("failure_count"), 0) << driver << r.out.substr(0, 1000);
                bytes.push_back(w.at("bytes").to_number<std::int64_t>());
            }
            const std::vector<std::int64_t> expected{static_cast<std::int64_t>(2 * 10 + 2 * 2000 + line),
                                                     static_cast<std::int64_t>(10 + 2 * 2000 + 2 * line)};
            EXPECT_EQ(bytes, expected) << driver << " " << upload;
            EXPECT_EQ(text(parse(r.out).at("workload").at("targets")), list_path) << driver;
            EXPECT_EQ(server.requests().size(), 12u) << driver;
            EXPECT_EQ(server.accepts(), 2) << driver << " " << upload;  // one kept connection per worker
        }
    std::remove(body_path);
    std::remove(list_path);
}

TEST(DriverStreams, AStreamedBodyIsNeverWhole) {
    // 8 MiB up and back: the peak RSS of a streamed run stays within 4 MiB of an upload of one byte, a whole one
    // (the body, and the answer read into one buffer) is more than 4 MiB above the streamed one
    const long size = 8 << 20;
    for (const std::string& driver : kDrivers) {
        Echo echo;
        test_support::TestServer server(echo.handler());
        const auto peak = [&](const std::vector<std::string>& flags) -> long {
            std::vector<std::string> all{"--url", server.url("/echo"), "--workers", "1", "--requests", "1"};
            all.insert(all.end(), flags.begin(), flags.end());
            const Ran r = run(driver, all);
            for (const value& w : workers_of(r)) EXPECT_EQ(w.at("failure_count"), 0) << driver << r.out;
            const value doc = parse(r.out);
            return doc.is_object() ? doc.at("peak_rss_kib").to_number<long>() : 0;
        };
        const long one = peak({"--method", "POST", "--body-size", "1"});
        const std::vector<std::string> body{"--method", "POST", "--body-size", std::to_string(size)};
        std::vector<std::string> streamed = body;
        streamed.insert(streamed.end(), {"--upload", "stream", "--download", "stream"});
        const long stream = peak(streamed);
        const long whole = peak(body);
        if (kSanitized) continue;
        EXPECT_LT(stream, one + 4096) << driver << ": " << one << " " << stream << " " << whole;
        EXPECT_GT(whole, stream + 4096) << driver << ": " << one << " " << stream << " " << whole;
    }
}
