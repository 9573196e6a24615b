// AsyncClient (beast_client/async_client.hpp) against the raw-socket test server: the four operations, keep-alive,
// many requests at once on one IoThread within max_connections, redirects and decoding, a stream's pieces,
// the timeouts, cancel() closing the connection, the retry rule, a stopped IoThread. Each callback must come
// exactly once. Nothing here asserts a speed: counts of connections and callbacks, and outcomes.
#include "async_support.hpp"
#include "beast_client/async_client.hpp"
#include "beast_client/cookies.hpp"
#include "compress.hpp"
#include "test_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace test_support;
using beast_client::AsyncClient;
using beast_client::AsyncResponseStream;
using beast_client::FetchResult;
using beast_client::IoThread;
using beast_client::RequestOptions;
using beast_client::Response;
using beast_client::Timeouts;

namespace {

std::string path_of(const std::string& req) {
    const auto sp = req.find(' ');
    return req.substr(sp + 1, req.find(' ', sp + 1) - sp - 1);
}

// Expects `call` to throw E whose message holds `text`.
template <class E, class Call>
void expect_error(Call&& call, const std::string& text) {
    try {
        call();
        ADD_FAILURE() << "no error (expected one with '" << text << "')";
    } catch (const E& e) {
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "another error: " << e.what();
    }
}

}  // namespace

TEST(Async, TheFourOperationsAndKeepAlive) {
    TestServer server(answer_all(kHello));
    IoThread io;
    AsyncClient c(io, Timeouts{5s, {}, {}}, {});
    for (int i = 0; i < 3; ++i) {
        const FetchResult r = get(c, server.url("/get"));
        EXPECT_EQ(r.status, 200);
        EXPECT_EQ(r.body_bytes, 5u);
    }
    Result<Response> posted;
    c.request("POST", server.url("/post"), {{"X-A", "1"}}, "the body", posted.callback());
    EXPECT_EQ(posted.get().body, "hello");
    Result<Response> sent;
    c.send("GET", server.url("/a b"), {}, {}, RequestOptions{}, sent.callback());
    const Response r = sent.get();
    EXPECT_EQ(r.url, server.url("/a%20b"));
    Result<std::unique_ptr<AsyncResponseStream>> opened;
    c.stream("GET", server.url("/s"), {}, {}, RequestOptions{}, opened.callback());
    auto s = opened.get();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->status(), 200);
    EXPECT_EQ(read_all(*s), "hello");
    EXPECT_EQ(server.accepts(), 1);
    EXPECT_EQ(c.connections_opened(), 1u);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 6u);
    EXPECT_EQ(reqs[3].rfind("POST /post HTTP/1.1\r\n", 0), 0u) << reqs[3];
    EXPECT_NE(reqs[3].find("\r\nX-A: 1\r\n"), std::string::npos) << reqs[3];
    EXPECT_EQ(reqs[3].substr(reqs[3].size() - 8), "the body");
    EXPECT_NE(reqs[4].find("Accept-Encoding: gzip, deflate, br, zstd"), std::string::npos) << reqs[4];
    EXPECT_EQ(posted.calls(), 1);
    EXPECT_EQ(opened.calls(), 1);
}

TEST(Async, ManyRequestsAtOnceShareThePoolWithinMaxConnections) {
    std::atomic<int> in_flight{0}, most{0};
    TestServer server([&](Conn& c) {
        while (c.read_request()) {
            const int n = ++in_flight;
            for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {
            }
            std::this_thread::sleep_for(5ms);
            --in_flight;
            c.write(kHello);
        }
    });
    IoThread io;
    AsyncClient c(io, Timeouts{20s, {}, {}}, {}, 4);
    std::vector<Result<FetchResult>> results(200);
    for (auto& r : results) c.get(server.url(), r.callback());
    for (auto& r : results) EXPECT_EQ(r.get(20s).status, 200);
    for (auto& r : results) EXPECT_EQ(r.calls(), 1);
    EXPECT_LE(server.accepts(), 4);
    EXPECT_LE(most.load(), 4);
    EXPECT_EQ(server.requests().size(), 200u);
}

TEST(Async, RedirectsCookiesAndDecoding) {
    const std::string body = text(200000);
    TestServer server([&](Conn& c) {
        std::string req;
        while (c.read_request(&req)) {
            const std::string p = path_of(req);
            if (p == "/start")
                c.write("HTTP/1.1 302 Found\r\nLocation: /br\r\nSet-Cookie: a=1\r\nContent-Length: 3\r\n\r\nabc");
            else if (p == "/br")
                c.write("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: " +
                        std::to_string(brotli(body).size()) + "\r\n\r\n" + brotli(body));
            else
                c.write("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " +
                        std::to_string(gzip(body).size()) + "\r\n\r\n" + gzip(body));
        }
    });
    IoThread io;
    AsyncClient c(io, Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    o.cookies = std::make_shared<beast_client::CookieJar>();
    Result<Response> sent;
    c.send("POST", server.url("/start"), {}, "data", o, sent.callback());
    const Response r = sent.get();
    EXPECT_EQ(r.url, server.url("/br"));
    EXPECT_TRUE(r.body == body);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_EQ(reqs[1].rfind("GET /br HTTP/1.1\r\n", 0), 0u) << reqs[1];  // a 302: a GET without the body
    EXPECT_NE(reqs[1].find("\r\nCookie: a=1\r\n"), std::string::npos) << reqs[1];
    EXPECT_EQ(server.accepts(), 1);  // the redirect's body read: its connection re-used
    Result<std::unique_ptr<AsyncResponseStream>> opened;
    c.stream("GET", server.url("/gzip"), {}, {}, o, opened.callback());
    auto s = opened.get();
    int pieces = 0;
    EXPECT_TRUE(read_all(*s, &pieces) == body);
    EXPECT_GT(pieces, 1);
    o.max_redirects = 0;
    Result<Response> limited;
    c.send("GET", server.url("/start"), {}, {}, o, limited.callback());
    expect_error<beast_client::TooManyRedirects>([&] { limited.get(); }, "more than 0 redirects");
}

TEST(Async, AStreamClosedEarlyDropsItsConnectionOneReadToItsEndKeepsIt) {
    const std::string big(1 << 20, 'x');
    TestServer server(
        answer_all("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(big.size()) + "\r\n\r\n" + big));
    IoThread io;
    AsyncClient c(io, Timeouts{5s, {}, {}}, {});
    Result<std::unique_ptr<AsyncResponseStream>> first;
    c.stream("GET", server.url(), {}, {}, RequestOptions{}, first.callback());
    auto s = first.get();
    Result<std::optional<std::string>> piece;
    s->next(piece.callback());
    EXPECT_FALSE(piece.get()->empty());
    s->close();
    Result<std::optional<std::string>> after;
    s->next(after.callback());
    EXPECT_FALSE(after.get());  // nullopt after close()
    Result<std::unique_ptr<AsyncResponseStream>> second;
    c.stream("GET", server.url(), {}, {}, RequestOptions{}, second.callback());
    auto whole = second.get();
    EXPECT_EQ(read_all(*whole).size(), big.size());
    EXPECT_EQ(get(c, server.url()).body_bytes, big.size());
    EXPECT_EQ(server.accepts(), 2);  // the closed stream's connection went, the whole one was kept
}

TEST(Async, TheTimeouts) {
    TestServer server([](Conn& c) {
        std::string req;
        while (c.read_request(&req)) {
            if (path_of(req) == "/drip") {  // a byte every 100 ms: never a read timeout of 300 ms
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n");
                for (int i = 0; i < 8; ++i) {
                    std::this_thread::sleep_for(100ms);
                    c.write("x");
                }
                continue;
            }
            c.wait_closed();  // never answers
            return;
        }
    });
    IoThread io;
    AsyncClient total(io, Timeouts{300ms, {}, {}}, {});
    expect_error<beast_client::TimeoutError>([&] { get(total, server.url("/never")); }, "timed out after 0.3 s");
    AsyncClient read(io, Timeouts{std::nullopt, std::nullopt, 300ms}, {});
    expect_error<beast_client::TimeoutError>([&] { get(read, server.url("/never")); }, "read timeout");
    EXPECT_EQ(get(read, server.url("/drip")).body_bytes, 8u);
    AsyncClient bounded(io, Timeouts{5s, 200ms, {}}, {}, 1);  // one connection, busy: the wait ends
    Result<FetchResult> holding;
    bounded.get(server.url("/never"), holding.callback());
    expect_error<beast_client::TimeoutError>([&] { get(bounded, server.url("/never")); }, "max_connections (1)");
    EXPECT_EQ(holding.calls(), 0);  // the first one still waits for its answer
}

TEST(Async, CancelAbandonsTheRequestAndClosesItsConnection) {
    std::atomic<int> closed{0};
    TestServer server([&](Conn& c) {
        if (!c.read_request()) return;
        c.wait_closed();  // never answers; returns when the client closes
        ++closed;
    });
    IoThread io;
    AsyncClient c(io, Timeouts{30s, {}, {}}, {});
    Result<FetchResult> r;
    auto op = c.get(server.url(), r.callback());
    ASSERT_TRUE(server.wait_requests(1));
    op->cancel();
    expect_error<beast_client::Cancelled>([&] { r.get(); }, "cancelled");
    for (int i = 0; i < 200 && closed.load() == 0; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(closed.load(), 1);
    op->cancel();  // again, after the end: nothing
    EXPECT_EQ(r.calls(), 1);
}

// As the Client's test: the server takes a request on a kept-alive connection and closes it unanswered.
TEST(Async, OnlyIdempotentRequestsAreSentAgainOnAStaleConnection) {
    TestServer server([](Conn& c) {
        std::string req;
        if (!c.read_request(&req)) return;
        c.write(kHello);
        if (path_of(req) == "/setup") {
            c.read_request();
            c.close();
            return;
        }
        while (c.read_request()) c.write(kHello);
    });
    for (const std::string method : {"POST", "PUT"}) {
        IoThread io;
        AsyncClient c(io, Timeouts{5s, {}, {}}, {});
        ASSERT_EQ(get(c, server.url("/setup")).status, 200);
        Result<Response> r;
        c.request(method, server.url("/" + method), {}, "body", r.callback());
        if (method == "POST") {
            expect_error<beast_client::ConnectionError>([&] { r.get(); }, "POST is not idempotent: not re-sent");
            EXPECT_EQ(c.connections_opened(), 1u);
        } else {
            EXPECT_EQ(r.get().status, 200);
            EXPECT_EQ(c.connections_opened(), 2u);
        }
    }
}

TEST(Async, ErrorsAsTheClientsAndAStoppedIoThread) {
    IoThread io;
    AsyncClient c(io, Timeouts{5s, {}, {}}, {});
    EXPECT_THROW(c.get("ftp://x/", [](FetchResult, std::exception_ptr) {}), beast_client::InvalidUrl);
    EXPECT_THROW(c.request("BAD METHOD", "http://127.0.0.1/", {}, {}, [](Response, std::exception_ptr) {}),
                 std::invalid_argument);
    expect_error<beast_client::ConnectionError>(
        [&] { get(c, "http://127.0.0.1:" + std::to_string(unused_port()) + "/"); }, "cannot connect");
    TestServer garbage(answer_all("NOT HTTP AT ALL\r\n\r\n"));
    expect_error<beast_client::ProtocolError>([&] { get(c, garbage.url()); }, "malformed HTTP response");
    io.stop();
    EXPECT_TRUE(io.stopped());
    EXPECT_THROW(c.get(garbage.url(), [](FetchResult, std::exception_ptr) {}), std::runtime_error);
}
