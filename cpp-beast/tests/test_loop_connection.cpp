// LoopConnection (beast_client/loop_connection.hpp) driven as an event loop drives it, here by poll(): the socket
// from AsyncClient::connect(), the requests of AsyncClient::loop_request(), keep-alive, a body kept, a write that
// waits for the socket (writable()), 1xx and Connection: close, the timeouts through expire(), the idle check, the
// retry rule and the errors of the AsyncClient. Nothing here asserts a speed.
#include "async_support.hpp"
#include "beast_client/async_client.hpp"
#include "beast_client/loop_connection.hpp"
#include "test_server.hpp"

#include <gtest/gtest.h>

#include <poll.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>

using namespace test_support;
using beast_client::AsyncClient;
using beast_client::IoThread;
using beast_client::LoopConnection;
using beast_client::LoopRequest;
using beast_client::Timeouts;
using Step = LoopConnection::Step;

namespace {

// What an event loop does with a request's steps: waits (poll) for what it waits for, or for its deadline.
Step drive(LoopConnection& c, Step s, std::chrono::milliseconds limit = 5s) {
    const auto until = LoopConnection::Clock::now() + limit;
    while (s == Step::read || s == Step::write) {
        const auto now = LoopConnection::Clock::now();
        if (now > until) {
            ADD_FAILURE() << "the request did not end within " << limit.count() << " ms";
            return Step::failed;
        }
        const auto wake = std::min(until, c.deadline());
        const int wait = static_cast<int>(
            std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1));
        pollfd p{c.fd(), static_cast<short>(s == Step::read ? POLLIN : POLLOUT), 0};
        if (::poll(&p, 1, wait) == 0) {
            s = c.expire(LoopConnection::Clock::now());
            continue;
        }
        s = s == Step::read ? c.readable() : c.writable();
    }
    return s;
}

LoopRequest request_of(AsyncClient& c, const std::string& method, const std::string& url, std::size_t length = 0) {
    auto r = c.loop_request(method, url, length);
    EXPECT_TRUE(r.has_value()) << url;
    return r ? *r : LoopRequest{};
}

std::unique_ptr<LoopConnection> open(AsyncClient& c, const LoopRequest& r) {
    Result<int> fd;
    c.connect(r, fd.callback());
    return std::make_unique<LoopConnection>(fd.get(), r);
}

Step send(LoopConnection& c, const LoopRequest& r, const std::string& body = {}, bool keep = false,
          const Timeouts& t = Timeouts{5s, {}, {}}, bool may_retry = false) {
    return drive(c, c.start(r, body, keep, t, LoopConnection::Clock::now(), may_retry));
}

template <class E>
void expect_error(const LoopConnection& c, const std::string& text) {
    ASSERT_TRUE(c.error());
    try {
        std::rethrow_exception(c.error());
    } catch (const E& e) {
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "another error: " << e.what();
    }
}

}  // namespace

TEST(LoopConnection, KeepAliveGetsAndABodyKept) {
    TestServer server(answer_all(kHello));
    IoThread io;
    AsyncClient client(io, Timeouts{5s, {}, {}}, {});
    const LoopRequest get = request_of(client, "GET", server.url("/get"));
    auto c = open(client, get);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(send(*c, get), Step::done);
        EXPECT_EQ(c->status(), 200);
        EXPECT_EQ(c->body_bytes(), 5u);
        EXPECT_TRUE(c->open());
        EXPECT_FALSE(c->busy());
    }
    const LoopRequest post = request_of(client, "POST", server.url("/post"), 8);
    ASSERT_EQ(send(*c, post, "the body", true), Step::done);
    EXPECT_EQ(c->body(), "hello");
    EXPECT_EQ(server.accepts(), 1);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 4u);
    EXPECT_EQ(reqs[0].rfind("GET /get HTTP/1.1\r\n", 0), 0u) << reqs[0];
    EXPECT_NE(reqs[0].find("\r\nUser-Agent: beast-client/"), std::string::npos) << reqs[0];
    EXPECT_EQ(reqs[3].rfind("POST /post HTTP/1.1\r\n", 0), 0u) << reqs[3];
    EXPECT_NE(reqs[3].find("\r\nContent-Length: 8\r\n"), std::string::npos) << reqs[3];
    EXPECT_EQ(reqs[3].substr(reqs[3].size() - 8), "the body");
    EXPECT_EQ(client.connections_opened(), 1u);
}

TEST(LoopConnection, OnlyPlainHttpWithoutAProxyAndTheClientsErrors) {
    IoThread io;
    AsyncClient client(io, Timeouts{5s, {}, {}}, {});
    EXPECT_FALSE(client.loop_request("GET", "https://127.0.0.1:1/", 0));
    beast_client::ProxyConfig proxy;
    proxy.http = "http://127.0.0.1:1";
    AsyncClient proxied(io, Timeouts{5s, {}, {}}, {}, 0, proxy);
    EXPECT_FALSE(proxied.loop_request("GET", "http://example.org/", 0));
    EXPECT_THROW(client.loop_request("GET", "ftp://x/", 0), beast_client::InvalidUrl);
    EXPECT_THROW(client.loop_request("BAD METHOD", "http://127.0.0.1/", 0), std::invalid_argument);
    const LoopRequest nobody = request_of(client, "GET", "http://127.0.0.1:" + std::to_string(unused_port()) + "/");
    Result<int> fd;
    client.connect(nobody, fd.callback());
    try {
        fd.get();
        ADD_FAILURE() << "connected to an unused port";
    } catch (const beast_client::ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot connect"), std::string::npos) << e.what();
    }
    TestServer garbage(answer_all("NOT HTTP AT ALL\r\n\r\n"));
    const LoopRequest r = request_of(client, "GET", garbage.url());
    auto c = open(client, r);
    ASSERT_EQ(send(*c, r), Step::failed);
    expect_error<beast_client::ProtocolError>(*c, "malformed HTTP response");
    EXPECT_FALSE(c->open());
}

TEST(LoopConnection, ALargeBodyWaitsForTheSocketInterimAnswersAndConnectionClose) {
    TestServer server([](Conn& c) {
        std::string req;
        while (c.read_request(&req)) {
            if (req.rfind("PUT", 0) == 0) {
                std::this_thread::sleep_for(50ms);  // the client's socket buffer fills meanwhile
                c.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: " +
                        std::to_string(req.size()) + "\r\n\r\n" + std::string(req.size(), 'x'));
            } else {
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
                return;
            }
        }
    });
    IoThread io;
    AsyncClient client(io, Timeouts{10s, {}, {}}, {});
    const std::string big(8 << 20, 'b');
    const LoopRequest put = request_of(client, "PUT", server.url("/big"), big.size());
    auto c = open(client, put);
    const Step first = c->start(put, big, false, Timeouts{10s, {}, {}}, LoopConnection::Clock::now(), false);
    EXPECT_EQ(first, Step::write);  // 8 MiB do not fit in a loopback socket's buffers at once
    ASSERT_EQ(drive(*c, first, 10s), Step::done);
    EXPECT_EQ(c->status(), 200);  // the 100 Continue skipped
    EXPECT_GT(c->body_bytes(), big.size());
    ASSERT_TRUE(c->open());
    const LoopRequest get = request_of(client, "GET", server.url("/last"));
    ASSERT_EQ(send(*c, get), Step::done);
    EXPECT_EQ(c->body_bytes(), 5u);
    EXPECT_FALSE(c->open());  // Connection: close
}

TEST(LoopConnection, TheTimeouts) {
    TestServer server([](Conn& c) {
        while (c.read_request()) c.wait_closed();  // never answers
    });
    IoThread io;
    AsyncClient client(io, Timeouts{5s, {}, {}}, {});
    const LoopRequest r = request_of(client, "GET", server.url("/never"));
    auto c = open(client, r);
    ASSERT_EQ(send(*c, r, {}, false, Timeouts{300ms, {}, {}}), Step::failed);
    expect_error<beast_client::TimeoutError>(*c, "timed out after 0.3 s (while reading the response)");
    auto d = open(client, r);
    ASSERT_EQ(send(*d, r, {}, false, Timeouts{std::nullopt, std::nullopt, 300ms}), Step::failed);
    expect_error<beast_client::TimeoutError>(*d, "read timeout");
}

// As the Client's test: the server takes a request on a kept-alive connection and closes it unanswered.
TEST(LoopConnection, OnlyIdempotentRequestsAreSentAgainOnAStaleConnection) {
    TestServer server([](Conn& c) {
        if (!c.read_request()) return;
        c.write(kHello);
        c.read_request();
        c.close();
    });
    IoThread io;
    AsyncClient client(io, Timeouts{5s, {}, {}}, {});
    for (const std::string method : {"POST", "PUT"}) {
        const LoopRequest first = request_of(client, "GET", server.url("/setup"));
        auto c = open(client, first);
        ASSERT_EQ(send(*c, first), Step::done);
        const LoopRequest r = request_of(client, method, server.url("/" + method), 4);
        ASSERT_TRUE(server.wait_requests(method == "POST" ? 1 : 3));
        const Step s = send(*c, r, "body", false, Timeouts{5s, {}, {}}, true);
        if (method == "POST") {
            ASSERT_EQ(s, Step::failed);
            expect_error<beast_client::ConnectionError>(*c, "POST is not idempotent: not re-sent");
        } else {
            EXPECT_EQ(s, Step::retry);
        }
        EXPECT_FALSE(c->open());
    }
}

TEST(LoopConnection, AnIdleConnectionTheServerClosedIsNotUsable) {
    TestServer server([](Conn& c) {
        if (c.read_request()) c.write(kHello);
        c.close();
    });
    IoThread io;
    AsyncClient client(io, Timeouts{5s, {}, {}}, {});
    const LoopRequest r = request_of(client, "GET", server.url());
    auto c = open(client, r);
    ASSERT_EQ(send(*c, r), Step::done);
    EXPECT_TRUE(c->open());
    pollfd p{c->fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1);  // the server's FIN
    EXPECT_FALSE(c->usable(false));     // a request that must not go twice looks first
    EXPECT_FALSE(c->open());
}
