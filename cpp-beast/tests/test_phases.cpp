// Phases (beast_client::Phases): where a request's time went, recorded by the library when asked (Client,
// AsyncClient on its IoThread, LoopConnection driven by poll() as an event loop drives it). A server that
// waits X ms before the response's head and Y ms between the head and the body: `wait` is X and `receive` Y
// within 10 % + 1 ms (the contract's bound, docs/raw-format.md); connect and tls are non-zero on a new connection
// (tls over https:// only) and zero on a re-used one. The bounds are the contract's; a test bounding a time runs
// as attempts (timing_support.hpp): beside the other suites a sleep ends late, never early.
#include "async_support.hpp"
#include "beast_client/async_client.hpp"
#include "beast_client/client.hpp"
#include "beast_client/loop_connection.hpp"
#include "timing_support.hpp"
#include "tls_pki.hpp"
#include "tls_server.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <thread>

using beast_client::Client;
using beast_client::Phases;
using namespace tls_test;

namespace {

constexpr auto kWait = std::chrono::milliseconds(80);     // X: before the head
constexpr auto kReceive = std::chrono::milliseconds(60);  // Y: between the head and the body
const std::string kBody(1000, 'b');

// Answers every request after `wait` with its head, then after `receive` with its body (one write each, sent at
// once: TCP_NODELAY).
TlsServer::Handler delayed(std::chrono::milliseconds wait, std::chrono::milliseconds receive) {
    return [wait, receive](Conn& c) {
        const int one = 1;
        ::setsockopt(c.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        while (c.read_request()) {
            std::this_thread::sleep_for(wait);
            c.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kBody.size()) + "\r\n\r\n");
            std::this_thread::sleep_for(receive);
            c.write(kBody);
        }
    };
}

using timing_test::Misses;
using timing_test::ms;

void expect_delays(Misses& m, const Phases& p) {
    m.about(ms(p.wait), static_cast<double>(kWait.count()), "wait");
    m.about(ms(p.receive), static_cast<double>(kReceive.count()), "receive");
    EXPECT_GT(p.send.count(), 0);
    m.below(ms(p.send), 5.0, "send");  // one small write
}

ServerOptions raw() { return ServerOptions{}; }

}  // namespace

TEST(Phases, PlainNewThenReusedConnection) {
    timing_test::attempts([](Misses& m) {
        TlsServer server(raw(), delayed(kWait, kReceive));
        Client c(std::chrono::seconds(5));
        Phases p;
        p.wait = std::chrono::seconds(9);  // get() sets every field
        std::size_t bytes = 0;
        EXPECT_EQ(c.get(server.url("/", "127.0.0.1", "http"), bytes, {}, &p), 200);
        EXPECT_EQ(bytes, kBody.size());
        EXPECT_GT(p.connect.count(), 0);
        EXPECT_EQ(p.tls.count(), 0);
        EXPECT_EQ(p.dns.count(), 0);  // an IP address: nothing resolved
        EXPECT_FALSE(p.resolved);
        expect_delays(m, p);

        EXPECT_EQ(c.get(server.url("/", "127.0.0.1", "http"), bytes, {}, &p), 200);
        EXPECT_EQ(p.connect.count(), 0);  // the kept-alive connection
        EXPECT_EQ(p.tls.count(), 0);
        expect_delays(m, p);
        EXPECT_EQ(server.accepts(), 1);
    });
}

TEST(Phases, TlsNewThenReusedConnection) {
    timing_test::attempts([](Misses& m) {
        TlsServer server(tls_with(pki().server), delayed(kWait, kReceive));
        Client c(std::chrono::seconds(5), trust_test_ca());
        Phases p;
        std::size_t bytes = 0;
        EXPECT_EQ(c.get(server.url(), bytes, {}, &p), 200);
        EXPECT_GT(p.connect.count(), 0);
        EXPECT_GT(p.tls.count(), 0);
        expect_delays(m, p);

        EXPECT_EQ(c.get(server.url(), bytes, {}, &p), 200);
        EXPECT_EQ(p.connect.count(), 0);
        EXPECT_EQ(p.tls.count(), 0);
        expect_delays(m, p);
        EXPECT_EQ(server.handshakes(), 1);
    });
}

TEST(Phases, TlsHandshakeDelayIsTls) {
    timing_test::attempts([](Misses& m) {
        // the server waits before its side of the handshake: that time is tls, not connect
        ServerOptions o = tls_with(pki().server);
        o.handshake_delay = std::chrono::milliseconds(50);
        TlsServer server(o, delayed(std::chrono::milliseconds(0), std::chrono::milliseconds(0)));
        Client c(std::chrono::seconds(5), trust_test_ca());
        Phases p;
        std::size_t bytes = 0;
        EXPECT_EQ(c.get(server.url(), bytes, {}, &p), 200);
        EXPECT_GE(ms(p.tls), 49.0);
        m.below(ms(p.connect), 40.0, "connect");
    });
}

TEST(Phases, AHostNameIsResolved) {
    TlsServer server(raw(), delayed(std::chrono::milliseconds(0), std::chrono::milliseconds(0)));
    Client c(std::chrono::seconds(5));
    Phases p;
    std::size_t bytes = 0;
    EXPECT_EQ(c.get(server.url("/", "localhost", "http"), bytes, {}, &p), 200);
    EXPECT_TRUE(p.resolved);
    EXPECT_GT(p.dns.count(), 0);
    EXPECT_GT(p.connect.count(), 0);
    EXPECT_EQ(c.get(server.url("/", "localhost", "http"), bytes, {}, &p), 200);
    EXPECT_FALSE(p.resolved);  // the kept-alive connection: nothing resolved
    EXPECT_EQ(p.dns.count(), 0);
}

TEST(Phases, RequestAndSendKeepThemInTheResponse) {
    timing_test::attempts([](Misses& m) {
        TlsServer server(tls_with(pki().server), delayed(kWait, kReceive));
        Client c(std::chrono::seconds(5), trust_test_ca());
        EXPECT_FALSE(c.request("GET", server.url()).phases);  // not asked: none
        Phases p;
        const beast_client::Response r = c.request("GET", server.url(), {}, {}, {}, &p);
        ASSERT_TRUE(r.phases);
        EXPECT_EQ(r.body, kBody);
        EXPECT_EQ(r.phases->wait, p.wait);
        EXPECT_EQ(p.connect.count(), 0);  // the first request's connection
        expect_delays(m, p);

        beast_client::RequestOptions options;
        EXPECT_FALSE(c.send("GET", server.url(), {}, {}, options).phases);
        options.phases = true;
        const beast_client::Response s = c.send("GET", server.url(), {}, {}, options);
        ASSERT_TRUE(s.phases);
        expect_delays(m, *s.phases);

        // a stream's: complete once its body has been read
        const auto stream = c.stream("GET", server.url(), {}, {}, options);
        std::string piece;
        std::string body;
        while (stream->next(piece)) body += piece;
        EXPECT_EQ(body, kBody);
        ASSERT_TRUE(stream->phases());
        expect_delays(m, *stream->phases());
    });
}

TEST(Phases, ARedirectAddsItsExchange) {
    timing_test::attempts([](Misses& m) {
        // two exchanges on one connection: a 302 after X, then the answer after X, Y: wait is both waits
        TlsServer server(raw(), [](Conn& c) {
            std::string request;
            while (c.read_request(&request)) {
                std::this_thread::sleep_for(kWait);
                if (request.rfind("GET /from ", 0) == 0) {
                    c.write("HTTP/1.1 302 Found\r\nLocation: /to\r\nContent-Length: 0\r\n\r\n");
                    continue;
                }
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            }
        });
        Client c(std::chrono::seconds(5));
        beast_client::RequestOptions options;
        options.phases = true;
        const beast_client::Response r = c.send("GET", server.url("/from", "127.0.0.1", "http"), {}, {}, options);
        EXPECT_EQ(r.status, 200);
        ASSERT_TRUE(r.phases);
        m.about(ms(r.phases->wait), 2.0 * kWait.count(), "wait");
        m.below(ms(r.phases->receive), 5.0, "receive");
    });
}

TEST(Phases, AFailedRequestKeepsWhatItRecorded) {
    // the server answers the head, then closes in the middle of the body
    TlsServer server(raw(), [](Conn& c) {
        if (c.read_request()) c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly");
        c.close();
    });
    Client c(std::chrono::seconds(5));
    Phases p;
    std::size_t bytes = 0;
    EXPECT_THROW(c.get(server.url("/", "127.0.0.1", "http"), bytes, {}, &p), beast_client::ConnectionError);
    EXPECT_GT(p.connect.count(), 0);
    EXPECT_GT(p.send.count(), 0);
}

// ---- AsyncClient and LoopConnection ------------------------------------------------------------------------

TEST(Phases, AsyncClientOverTls) {
    timing_test::attempts([](Misses& m) {
        TlsServer server(tls_with(pki().server), delayed(kWait, kReceive));
        beast_client::IoThread io;
        beast_client::AsyncClient c(io, beast_client::Timeouts{std::chrono::seconds(5), {}, {}}, trust_test_ca());
        const auto fetch = [&](bool phases) {
            test_support::Result<beast_client::FetchResult> r;
            c.get(server.url(), r.callback(), phases);
            return r.get();
        };
        const beast_client::FetchResult first = fetch(true);
        EXPECT_EQ(first.status, 200);
        EXPECT_EQ(first.body_bytes, kBody.size());
        ASSERT_TRUE(first.phases);
        EXPECT_GT(first.phases->connect.count(), 0);
        EXPECT_GT(first.phases->tls.count(), 0);
        expect_delays(m, *first.phases);
        EXPECT_FALSE(fetch(false).phases);  // not asked: none
        const beast_client::FetchResult third = fetch(true);
        ASSERT_TRUE(third.phases);
        EXPECT_EQ(third.phases->connect.count(), 0);
        EXPECT_EQ(third.phases->tls.count(), 0);
        expect_delays(m, *third.phases);

        beast_client::RequestOptions options;
        options.phases = true;
        test_support::Result<beast_client::Response> sent;
        c.send("GET", server.url(), {}, {}, options, sent.callback());
        const beast_client::Response r = sent.get();
        EXPECT_EQ(r.body, kBody);
        ASSERT_TRUE(r.phases);
        expect_delays(m, *r.phases);
        EXPECT_EQ(server.handshakes(), 1);
    });
}

TEST(Phases, LoopConnectionAndItsConnecting) {
    timing_test::attempts([](Misses& m) {
        TlsServer server(raw(), delayed(kWait, kReceive));
        beast_client::IoThread io;
        beast_client::AsyncClient c(io, beast_client::Timeouts{std::chrono::seconds(5), {}, {}}, {});
        const auto r = c.loop_request("GET", server.url("/", "localhost", "http"), 0);
        ASSERT_TRUE(r);
        struct Connected {
            int fd = -1;
            Phases phases;
        };
        test_support::Result<Connected> connected;
        auto done = connected.callback();
        c.connect_recording(*r, [done](int fd, Phases p, std::exception_ptr e) { done(Connected{fd, p}, e); });
        const Connected conn = connected.get();
        ASSERT_GE(conn.fd, 0);
        EXPECT_TRUE(conn.phases.resolved);
        EXPECT_GT(conn.phases.dns.count(), 0);
        EXPECT_GT(conn.phases.connect.count(), 0);
        EXPECT_EQ(conn.phases.send.count(), 0);

        beast_client::LoopConnection lc(conn.fd, *r);
        for (const bool record : {true, false}) {
            using Step = beast_client::LoopConnection::Step;
            Step s = lc.start(*r, {}, false, beast_client::Timeouts{std::chrono::seconds(5), {}, {}},
                              beast_client::LoopConnection::Clock::now(), false, record);
            while (s == Step::read || s == Step::write) {  // as an event loop: poll(), then the step
                pollfd p{lc.fd(), static_cast<short>(s == Step::read ? POLLIN : POLLOUT), 0};
                ASSERT_EQ(::poll(&p, 1, 5000), 1);
                s = s == Step::read ? lc.readable() : lc.writable();
            }
            ASSERT_EQ(s, Step::done);
            EXPECT_EQ(lc.body_bytes(), kBody.size());
            if (!record) {
                EXPECT_FALSE(lc.phases());
                continue;
            }
            ASSERT_TRUE(lc.phases());
            expect_delays(m, *lc.phases());
            EXPECT_EQ(lc.phases()->connect.count(), 0);  // the connecting's are AsyncClient's
        }
    });
}
