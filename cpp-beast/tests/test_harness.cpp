// The driver harness (harness/harness.hpp): canonical failure reasons, and harness::main's failure accounting
// with fake clients (no network).
#include "harness.hpp"

#include "beast_client/client.hpp"
#include "harness_support.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

using harness::failure_reason;
using harness_test::run_driver;
using harness_test::ScriptedClient;

namespace {

// The failure reasons in a document, worker by worker, in order.
std::vector<std::string> reasons_in(const std::string& doc) {
    std::vector<std::string> out;
    const harness_test::json::value v = harness_test::parse(doc);
    if (!v.is_object()) return out;
    for (const auto& worker : v.at("workers").as_array())
        for (const auto& failure : worker.at("failures").as_array())
            out.push_back(harness_test::text(failure.at("reason")));
    return out;
}

}  // namespace

TEST(FailureReason, ClientErrorsKeepTheirClass) {
    EXPECT_EQ(failure_reason(beast_client::TimeoutError("request timed out")), "TimeoutError: request timed out");
    EXPECT_EQ(failure_reason(beast_client::ConnectionError("refused", beast_client::ConnectionError::Kind::refused)),
              "ConnectionError: refused");
    EXPECT_EQ(failure_reason(beast_client::ProtocolError("bad status line")), "ProtocolError: bad status line");
    EXPECT_EQ(failure_reason(beast_client::InvalidUrl("invalid URL 'x'")), "InvalidUrl: invalid URL 'x'");
    EXPECT_EQ(failure_reason(beast_client::Cancelled("cancelled")), "Cancelled: cancelled");
    EXPECT_EQ(failure_reason(beast_client::Error("internal error")), "Error: internal error");
}

TEST(FailureReason, InvalidArgumentIsInvalidRequest) {
    EXPECT_EQ(failure_reason(std::invalid_argument("invalid HTTP method 'G T'")),
              "InvalidRequest: std::invalid_argument: invalid HTTP method 'G T'");
}

TEST(FailureReason, AnyOtherExceptionIsError) {
    EXPECT_EQ(failure_reason(std::runtime_error("boom")), "Error: std::runtime_error: boom");
    EXPECT_EQ(failure_reason(std::bad_alloc()), "Error: std::bad_alloc");
    EXPECT_EQ(failure_reason(std::out_of_range("no such worker")), "Error: std::out_of_range: no such worker");
    const std::string sys = failure_reason(std::system_error(std::make_error_code(std::errc::too_many_files_open)));
    EXPECT_EQ(sys.rfind("Error: std::system_error: ", 0), 0u) << sys;
}

TEST(FailureReason, IsOneLine) {
    EXPECT_EQ(failure_reason(beast_client::ProtocolError("line one\r\nline two\n")),
              "ProtocolError: line one  line two");
    EXPECT_EQ(failure_reason(beast_client::TimeoutError("")), "TimeoutError");
}

TEST(Harness, RequestFailuresHaveCanonicalReasons) {
    const auto make = [](const harness::ClientOptions&) {
        return std::make_unique<ScriptedClient>(std::vector<harness_test::Step>{
            []() -> harness::Fetch { throw beast_client::TimeoutError("timed out after 1 s"); },
            [] {
                return harness::Fetch{503, 3};
            },
            []() -> harness::Fetch { throw std::logic_error("oops"); },
            []() -> harness::Fetch { throw 42; },  // not even a std::exception
            [] {
                return harness::Fetch{200, 5};
            },
        });
    };
    int rc = -1;
    const std::string doc = run_driver(make, {"--workers", "1", "--requests", "5"}, &rc);
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(reasons_in(doc), (std::vector<std::string>{"TimeoutError: timed out after 1 s", "status 503",
                                                         "Error: std::logic_error: oops", "Error: unknown exception"}))
        << doc;
    EXPECT_NE(doc.find("\"reason\":\"status 503\",\"status\":503"), std::string::npos) << doc;
    EXPECT_NE(doc.find("\"bytes\":8,"), std::string::npos) << doc;
}

TEST(Harness, ARequestPastTheTimeoutIsATimeoutWhateverItReturned) {
    // --timeout bounds the whole request: a client whose timeout bounds each read (the floor's) can return a
    // 200, a 500 or a wrong upload answer after it; each is a TimeoutError, its bytes still received
    const auto slow = [](harness_test::Reply fetch) -> harness_test::Step {
        return [fetch] {
            std::this_thread::sleep_for(std::chrono::milliseconds(60));
            return fetch;
        };
    };
    for (const char* loop : {"--requests", "--rate"}) {
        std::vector<std::string> flags{"--workers", "1", "--requests", "3", "--timeout", "0.05"};
        if (std::string(loop) == "--rate") flags.insert(flags.end(), {"--rate", "1000"});
        const std::string doc =
            run_driver(harness_test::scripted({harness_test::ok(2), slow({200, 3}), slow({500, 4})}), flags);
        const std::vector<std::string> reasons = reasons_in(doc);
        ASSERT_EQ(reasons.size(), 2u) << doc;
        for (const std::string& r : reasons) EXPECT_EQ(r.rfind("TimeoutError: the request took 0.0", 0), 0u) << r;
        EXPECT_NE(reasons[0].find(", past --timeout 0.05 s"), std::string::npos) << reasons[0];
        EXPECT_NE(doc.find("\"bytes\":9,"), std::string::npos) << doc;
        EXPECT_EQ(doc.find("\"status\":500"), std::string::npos) << doc;
    }
    // an upload's wrong answer after the timeout: a TimeoutError too
    const std::string up = run_driver(harness_test::scripted({slow({200, 3, "bad"})}),
                                      {"--workers", "1", "--requests", "1", "--timeout", "0.05", "--method", "PUT"});
    EXPECT_EQ(reasons_in(up).at(0).rfind("TimeoutError: ", 0), 0u) << up;
}

TEST(Harness, ANon200UploadAnswerIsItsStatusNotADigestMismatch) {
    const std::string doc = run_driver(harness_test::scripted({[] {
                                           return harness_test::Reply{405, 18, "Method Not Allowed"};
                                       }}),
                                       {"--workers", "1", "--requests", "2", "--method", "POST", "--body-size", "3"});
    EXPECT_EQ(reasons_in(doc), std::vector<std::string>(2, "status 405")) << doc;
    EXPECT_NE(doc.find("\"reason\":\"status 405\",\"status\":405"), std::string::npos) << doc;
}

TEST(Harness, SetupFailureIsTheReasonOfEveryRequest) {
    const auto throws = [](const harness::ClientOptions&) -> std::unique_ptr<harness::Client> {
        throw beast_client::ConnectionError("cannot connect to 127.0.0.1:9: Connection refused");
    };
    for (const char* connection : {"keep-alive", "new"}) {
        const std::string doc = run_driver(throws, {"--workers", "2", "--requests", "2", "--connection", connection});
        EXPECT_EQ(reasons_in(doc),
                  std::vector<std::string>(4, "ConnectionError: cannot connect to 127.0.0.1:9: Connection refused"))
            << doc;
    }
    const auto runtime = [](const harness::ClientOptions&) -> std::unique_ptr<harness::Client> {
        throw std::runtime_error("no sockets");
    };
    EXPECT_EQ(reasons_in(run_driver(runtime, {"--workers", "1", "--requests", "2"})),
              std::vector<std::string>(2, "Error: std::runtime_error: no sockets"));
}

TEST(Harness, NoClientIsAnError) {
    const auto none = [](const harness::ClientOptions&) { return std::unique_ptr<harness::Client>(); };
    for (const char* connection : {"keep-alive", "new"})
        EXPECT_EQ(reasons_in(run_driver(none, {"--workers", "1", "--requests", "2", "--connection", connection})),
                  std::vector<std::string>(2, "Error: std::runtime_error: the driver created no client"));
}

// ---- --client-scope shared and --http 2 ------------------------------------------------------------

namespace {

// A client every worker may use at once: counts its requests.
class CountingClient final : public harness::Client {
public:
    explicit CountingClient(std::atomic<int>& requests) : requests_(requests) {}
    harness::Fetch get(const std::string&) override {
        ++requests_;
        return {200, 5};
    }
    int send(const std::string&, const std::string&, harness::Outgoing&, harness::Answer&) override { return 500; }

private:
    std::atomic<int>& requests_;
};

}  // namespace

TEST(Harness, SharedScopeMakesOneClientForEveryWorker) {
    std::atomic<int> made{0};
    std::atomic<int> requests{0};
    std::size_t max_connections = 0;
    const auto make = [&](const harness::ClientOptions& o) -> std::unique_ptr<harness::Client> {
        ++made;
        max_connections = o.max_connections;
        return std::make_unique<CountingClient>(requests);
    };
    const auto o =
        harness_test::run_main(make, {"--workers", "3", "--requests", "4", "--warmup", "2", "--client-scope", "shared"},
                               "http://127.0.0.1:9/", true);
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(made.load(), 1);
    EXPECT_EQ(max_connections, 3u);  // W
    EXPECT_EQ(requests.load(), 3 * (4 + 2));
    const auto doc = harness_test::parse(o.out);
    EXPECT_EQ(harness_test::text(doc.at("workload").at("client_scope")), "shared");
    for (const auto& w : doc.at("workers").as_array()) {
        EXPECT_EQ(w.at("count"), 4);
        EXPECT_EQ(w.at("bytes"), 20);
        EXPECT_EQ(w.at("failure_count"), 0);
    }
    // per-worker: a client per worker, unbounded
    made = 0;
    const auto per_worker =
        harness_test::run_main(make, {"--workers", "3", "--requests", "1"}, "http://127.0.0.1:9/", true);
    EXPECT_EQ(per_worker.status, 0);
    EXPECT_EQ(made.load(), 3);
    EXPECT_EQ(max_connections, 0u);
    EXPECT_EQ(harness_test::text(harness_test::parse(per_worker.out).at("workload").at("client_scope")), "per-worker");
}

TEST(Harness, ASharedClientThatCannotBeMadeFailsEveryRequest) {
    const auto throws = [](const harness::ClientOptions&) -> std::unique_ptr<harness::Client> {
        throw beast_client::ConnectionError("no client today");
    };
    const auto o = harness_test::run_main(throws, {"--workers", "2", "--requests", "3", "--client-scope", "shared"},
                                          "http://127.0.0.1:9/", true);
    EXPECT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(reasons_in(o.out), std::vector<std::string>(6, "ConnectionError: no client today"));
}

TEST(Harness, WhatTheDriverCannotDoExits3WithOneLine) {
    std::atomic<int> made{0};
    const auto make = [&](const harness::ClientOptions&) -> std::unique_ptr<harness::Client> {
        ++made;
        return std::make_unique<ScriptedClient>(std::vector<harness_test::Step>{harness_test::ok()});
    };
    const auto shared = harness_test::run_main(make, {"--client-scope", "shared"});  // not shareable
    EXPECT_EQ(shared.status, 3);
    EXPECT_EQ(shared.out, "");
    EXPECT_EQ(shared.err, "unsupported: --client-scope shared (its client cannot be shared by threads)\n");
    const auto h2 = harness_test::run_main(make, {"--http", "2"}, "http://127.0.0.1:9/", true);
    EXPECT_EQ(h2.status, 3);
    EXPECT_EQ(h2.out, "");
    EXPECT_EQ(h2.err, "unsupported: HTTP/2 (the client speaks HTTP/1.1)\n");
    EXPECT_EQ(made.load(), 0);
    // a usage error is reported first (exit 2)
    EXPECT_EQ(harness_test::run_main(make, {"--http", "2", "--workers", "0"}).status, 2);
    const auto h11 = harness_test::run_main(make, {"--http", "1.1", "--workers", "1", "--requests", "1"});
    EXPECT_EQ(h11.status, 0);
    EXPECT_EQ(harness_test::text(harness_test::parse(h11.out).at("workload").at("http")), "1.1");
}

// ---- TLS: the contract's --ca-file / --insecure, TLSError reasons, client.tls ----------------------

TEST(FailureReason, TlsErrorKeepsItsClass) {
    EXPECT_EQ(failure_reason(beast_client::TLSError("TLS handshake with h:443 failed: certificate verify failed: "
                                                    "certificate has expired")),
              "TLSError: TLS handshake with h:443 failed: certificate verify failed: certificate has expired");
}

namespace {

// Records the options it was created with; reports a TLS version when asked to. Each worker makes its client on its
// own thread: the record is locked (two workers' push_back at once lost an allocation under LeakSanitizer).
class OptionsClient final : public harness::Client {
public:
    OptionsClient(const harness::ClientOptions& o, std::vector<harness::ClientOptions>* seen, bool tls) : tls_(tls) {
        static std::mutex m;
        const std::lock_guard<std::mutex> lock(m);
        seen->push_back(o);
    }
    harness::Fetch get(const std::string&) override { return {200, 1}; }
    int send(const std::string&, const std::string&, harness::Outgoing&, harness::Answer& answer) override {
        answer.feed("x");
        return 200;
    }
    std::optional<beast_client::TlsInfo> tls_info() const override {
        if (!tls_) return std::nullopt;
        return beast_client::TlsInfo{"TLSv1.3", "TLS_AES_256_GCM_SHA384"};
    }

private:
    bool tls_;
};

}  // namespace

/// A file holding one PEM certificate (a self-signed one; the harness checks that a --ca-file holds one, the fake
/// clients do not use it), removed at the end of its scope.
struct CaFile {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("harness-test-ca-" + std::to_string(::getpid()) + "-" + std::to_string(next()) + ".pem"))
                           .string();
    CaFile() { std::ofstream(path) << kCertificate; }
    ~CaFile() { std::filesystem::remove(path); }
    static int next() {
        static std::atomic<int> n{0};
        return n++;
    }
    static constexpr const char* kCertificate = R"(-----BEGIN CERTIFICATE-----
MIIBgjCCASmgAwIBAgIUbKF54Lo3NWXC/wk++PNQeupcMngwCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMaGFybmVzcy10ZXN0MB4XDTI2MTEyOTAxMTMzNloXDTM2MTEy
NjAxMTMzNlowFzEVMBMGA1UEAwwMaGFybmVzcy10ZXN0MFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAEsj6RQtShDyFbgUD2PqYyOcv8Nu5bCCv+moyZMr785IKfawAO
07DNvvaagnOMuNGj3WkuRP1tfH1vjUTjr//BgqNTMFEwHQYDVR0OBBYEFJjMC/vh
jgQh7bhgYtfBP2aETlVjMB8GA1UdIwQYMBaAFJjMC/vhjgQh7bhgYtfBP2aETlVj
MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgSJlQhhMgsqm+6Q5T
VRDI3UOFrstImSEwXxhjMkGbixUCIEYxZqrk9OexucXbAqfpM2piz+vvigkeD8kt
RC+fZ+1k
-----END CERTIFICATE-----
)";
};

TEST(Harness, CaFileAndInsecureReachTheClients) {
    std::vector<harness::ClientOptions> seen;
    const auto make = [&seen](const harness::ClientOptions& o) {
        return std::make_unique<OptionsClient>(o, &seen, false);
    };
    int rc = -1;
    const CaFile ca;
    run_driver(make, {"--workers", "1", "--requests", "1", "--ca-file", ca.path, "--timeout", "2.5"}, &rc);
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(seen.size(), 2u);  // the up-front check of --ca-file, then the worker's
    for (const auto& o : seen) {
        EXPECT_EQ(o.ca_file, ca.path);
        EXPECT_FALSE(o.insecure);
        EXPECT_EQ(o.timeout_s, 2.5);
    }
    seen.clear();
    run_driver(make, {"--workers", "2", "--requests", "1", "--insecure"}, &rc);
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(seen.size(), 2u);
    for (const auto& o : seen) {
        EXPECT_TRUE(o.ca_file.empty());
        EXPECT_TRUE(o.insecure);
    }
    seen.clear();
    run_driver(make, {"--workers", "1", "--requests", "1"}, &rc);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_TRUE(seen[0].ca_file.empty());
    EXPECT_FALSE(seen[0].insecure);
}

TEST(Harness, TlsFlagsUsageErrors) {
    const auto make = [](const harness::ClientOptions&) -> std::unique_ptr<harness::Client> {
        throw std::invalid_argument("the CA file 'x' holds no usable PEM certificate");
    };
    for (const auto& flags : std::vector<std::vector<std::string>>{{"--ca-file", "ca.pem", "--insecure"},
                                                                   {"--insecure", "--ca-file=ca.pem"},
                                                                   {"--insecure=yes"},
                                                                   {"--ca-file"},
                                                                   {"--ca-file", ""},
                                                                   {"--ca-file", "bad.pem"}}) {
        const harness_test::Outcome o = harness_test::run_main(make, flags);
        EXPECT_EQ(o.status, 2) << flags[0];
        EXPECT_TRUE(o.out.empty()) << o.out;
        EXPECT_NE(o.err.find("test-driver: error: "), std::string::npos) << o.err;
    }
}

TEST(Harness, HelpListsTheTlsFlags) {
    const std::string out = run_driver([](const harness::ClientOptions&) { return nullptr; }, {"--help"});
    EXPECT_NE(out.find("[--ca-file PATH | --insecure]"), std::string::npos) << out;
    EXPECT_NE(out.find("  --ca-file PATH "), std::string::npos) << out;
    EXPECT_NE(out.find("  --insecure "), std::string::npos) << out;
}

TEST(Harness, DocumentReportsWorkerZerosTls) {
    std::vector<harness::ClientOptions> seen;
    const std::string tls =
        run_driver([&seen](const harness::ClientOptions& o) { return std::make_unique<OptionsClient>(o, &seen, true); },
                   {"--workers", "2", "--requests", "1"});
    EXPECT_NE(tls.find(",\"tls\":{\"version\":\"TLSv1.3\",\"cipher\":\"TLS_AES_256_GCM_SHA384\"}},\"workload\""),
              std::string::npos)
        << tls;
    const std::string plain = run_driver(
        [&seen](const harness::ClientOptions& o) { return std::make_unique<OptionsClient>(o, &seen, false); },
        {"--workers", "1", "--requests", "1"});
    EXPECT_NE(plain.find(",\"tls\":null},\"workload\""), std::string::npos) << plain;
}

TEST(Harness, TlsErrorsAreCountedWithTheirClass) {
    const auto make = [](const harness::ClientOptions&) {
        return std::make_unique<ScriptedClient>(std::vector<harness_test::Step>{
            []() -> harness::Fetch {
                throw beast_client::TLSError(
                    "TLS handshake with 127.0.0.1:9 failed: certificate verify failed: "
                    "hostname mismatch");
            },
        });
    };
    EXPECT_EQ(reasons_in(run_driver(make, {"--workers", "1", "--requests", "2"})),
              std::vector<std::string>(2,
                                       "TLSError: TLS handshake with 127.0.0.1:9 failed: certificate verify "
                                       "failed: hostname mismatch"));
}
