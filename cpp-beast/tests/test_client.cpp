// The client against a tiny raw-socket HTTP server on 127.0.0.1 (canned answers, one thread per
// connection). Every test is bounded in time: client timeouts are short and the server shuts its
// sockets down when it is destroyed.
#include "beast_client/client.hpp"
#include "test_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using beast_client::Client;
using Clock = std::chrono::steady_clock;

using namespace test_support;

// ---- success paths ------------------------------------------------------------------------------------

TEST(Client, GetReadsBodyAndReusesTheConnection) {
    TestServer server(answer_all(kHello));
    Client c(2s);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(c.get(server.url("/x")), 200);
        EXPECT_EQ(c.last_body_bytes(), 5u);
    }
    EXPECT_EQ(server.accepts(), 1);
    EXPECT_EQ(c.connections_opened(), 1u);
    EXPECT_TRUE(c.connected());
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 3u);
    EXPECT_EQ(reqs[0].rfind("GET /x HTTP/1.1\r\n", 0), 0u) << reqs[0];
    EXPECT_NE(reqs[0].find("Host: 127.0.0.1:" + std::to_string(server.port()) + "\r\n"), std::string::npos);
}

TEST(Client, UserAgentCarriesTheLibraryVersion) {
    // beast_client::version is version.hpp's string, which must agree with its three numbers
    const std::string version = beast_client::version;
    EXPECT_EQ(version, std::to_string(BEAST_CLIENT_VERSION_MAJOR) + "." + std::to_string(BEAST_CLIENT_VERSION_MINOR) +
                           "." + std::to_string(BEAST_CLIENT_VERSION_PATCH));
    TestServer server(answer_all(kHello));
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 1u);
    EXPECT_NE(reqs[0].find("\r\nUser-Agent: beast-client/" + version + " Boost.Beast/"), std::string::npos) << reqs[0];
}

TEST(Client, NonSuccessStatusIsReturned) {
    TestServer server(answer_all("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops"));
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 500);
    EXPECT_EQ(c.last_body_bytes(), 4u);
    const auto r = c.request("GET", server.url());
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(r.body, "oops");
    EXPECT_EQ(server.accepts(), 1);
}

TEST(Client, ConnectionCloseMakesTheNextRequestReconnect) {
    TestServer server([](Conn& c) {
        if (c.read_request()) c.write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
        c.close();
    });
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_FALSE(c.connected());
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(server.accepts(), 2);
    EXPECT_EQ(c.connections_opened(), 2u);
}

TEST(Client, ChunkedBody) {
    TestServer server(
        answer_all("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(c.last_body_bytes(), 11u);
    const auto r = c.request("GET", server.url());
    EXPECT_EQ(r.body, "hello world");
    EXPECT_EQ(server.accepts(), 1);  // chunked responses keep the connection
}

TEST(Client, BodyUntilEofThenReconnect) {
    TestServer server([](Conn& c) {
        if (c.read_request()) c.write("HTTP/1.1 200 OK\r\n\r\nhello until eof");
        c.close();
    });
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(c.last_body_bytes(), 15u);
    EXPECT_FALSE(c.connected());
    EXPECT_EQ(c.request("GET", server.url()).body, "hello until eof");
    EXPECT_EQ(server.accepts(), 2);
}

TEST(Client, LargeBodyAndLargeHeaders) {
    const std::string body(8 * 1024 * 1024, 'x');
    const std::string big_header(1024 * 1024, 'h');  // far over Beast's default 8 KiB header limit
    TestServer server(answer_all("HTTP/1.1 200 OK\r\nX-Big: " + big_header +
                                 "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
    Client c(10s);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(c.last_body_bytes(), body.size());
    const auto r = c.request("GET", server.url());
    EXPECT_EQ(r.body.size(), body.size());
    bool found = false;
    for (const auto& [name, value] : r.headers)
        if (name == "X-Big") found = value.size() == big_header.size();
    EXPECT_TRUE(found);
}

TEST(Client, RequestSendsMethodHeadersAndBody) {
    TestServer server(answer_all("HTTP/1.1 201 Created\r\nX-Reply: yes\r\nContent-Length: 3\r\n\r\nabc"));
    Client c(2s);
    const auto r =
        c.request("POST", server.url("/echo?a=1"), {{"X-Test", "1"}, {"Content-Type", "text/plain"}}, "payload");
    EXPECT_EQ(r.status, 201);
    EXPECT_EQ(r.body, "abc");
    ASSERT_FALSE(r.headers.empty());
    bool reply = false;
    for (const auto& [name, value] : r.headers)
        if (name == "X-Reply" && value == "yes") reply = true;
    EXPECT_TRUE(reply);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 1u);
    const std::string& q = reqs[0];
    EXPECT_EQ(q.rfind("POST /echo?a=1 HTTP/1.1\r\n", 0), 0u) << q;
    EXPECT_NE(q.find("X-Test: 1\r\n"), std::string::npos) << q;
    EXPECT_NE(q.find("Content-Length: 7\r\n"), std::string::npos) << q;
    EXPECT_EQ(q.substr(q.size() - 7), "payload");
    EXPECT_EQ(c.last_body_bytes(), 3u);
}

TEST(Client, HeadSkipsTheBodyAndKeepsTheConnection) {
    TestServer server([](Conn& c) {
        std::string req;
        while (c.read_request(&req)) {
            if (req.rfind("HEAD ", 0) == 0)
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
            else
                c.write(kHello);
        }
    });
    Client c(2s);
    const auto r = c.request("HEAD", server.url());
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(r.body.empty());
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(c.last_body_bytes(), 5u);
    EXPECT_EQ(server.accepts(), 1);
}

TEST(Client, HostChangeKeepsAConnectionPerHost) {
    TestServer a(answer_all(kHello));
    TestServer b(answer_all(kHello));
    Client c(2s);
    EXPECT_EQ(c.get(a.url()), 200);
    EXPECT_EQ(c.get(b.url()), 200);
    EXPECT_EQ(c.get(a.url()), 200);
    EXPECT_EQ(a.accepts(), 1);  // the pool kept a's connection open
    EXPECT_EQ(b.accepts(), 1);
    EXPECT_EQ(c.connections_opened(), 2u);
}

TEST(Client, CloseThenReuse) {
    TestServer server(answer_all(kHello));
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    c.close();
    EXPECT_FALSE(c.connected());
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(server.accepts(), 2);
}

TEST(Client, InvalidMethodOrHeaderIsRejectedBeforeSending) {
    TestServer server(answer_all(kHello));
    Client c(2s);
    EXPECT_THROW(c.request("GE T", server.url()), std::invalid_argument);
    EXPECT_THROW(c.request("GET", server.url(), {{"X-Evil", "a\r\nInjected: 1"}}), std::invalid_argument);
    EXPECT_THROW(c.request("GET", server.url(), {{"Bad Name", "v"}}), std::invalid_argument);
    EXPECT_EQ(server.accepts(), 0);
}

// ---- keep-alive: idle closes and the retry rules ----------------------------------------------------

TEST(Client, IdleCloseBetweenRequestsReopensTheConnection) {
    TestServer server([](Conn& c) {
        if (c.read_request()) c.write(kHello);
        c.close();  // the idle keep-alive connection goes away before the next request
    });
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_TRUE(c.connected());         // the response said keep-alive
    std::this_thread::sleep_for(50ms);  // let the FIN arrive
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(c.request("GET", server.url()).body, "hello");
    EXPECT_EQ(server.accepts(), 3);
    EXPECT_EQ(c.connections_opened(), 3u);
}

TEST(Client, IdleResetBetweenRequestsReopensTheConnection) {
    TestServer server([](Conn& c) {
        if (c.read_request()) c.write(kHello);
        std::this_thread::sleep_for(20ms);
        c.reset();
    });
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    std::this_thread::sleep_for(80ms);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(server.accepts(), 2);
}

// A server with a 200 ms keep-alive timeout; every request, with its body, is sent after a 400 ms pause,
// i.e. after the server closed the idle connection: the client notices before sending and reconnects, and
// the server sees each request exactly once, whatever the method.
TEST(Client, IdleTimeoutCloseIsReopenedBeforeSendingForEveryMethod) {
    TestServer server([](Conn& c) {
        std::string req;
        while (c.wait_readable(200ms) && c.read_request(&req)) {
            const std::string line = req.substr(0, req.find("\r\n"));
            c.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(line.size()) + "\r\n\r\n" + line);
        }
        c.close();  // idle for 200 ms (or the client closed)
    });
    Client c(2s);
    EXPECT_EQ(c.get(server.url("/first")), 200);
    const std::vector<std::string> methods{"GET", "POST", "PUT", "PATCH"};
    for (const auto& method : methods) {
        std::this_thread::sleep_for(400ms);
        const std::string body = "body of the " + method + " request";
        const auto r = c.request(method, server.url("/" + method), {{"Content-Type", "text/plain"}}, body);
        EXPECT_EQ(r.status, 200) << method;
        EXPECT_EQ(r.body, method + " /" + method + " HTTP/1.1") << method;
    }
    EXPECT_EQ(server.accepts(), 5);
    EXPECT_EQ(c.connections_opened(), 5u);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 5u);
    for (std::size_t i = 0; i < methods.size(); ++i) {
        const std::string& m = methods[i];
        const std::string& q = reqs[i + 1];
        EXPECT_EQ(q.rfind(m + " /" + m + " HTTP/1.1\r\n", 0), 0u) << q;
        const std::string body = "body of the " + m + " request";
        EXPECT_EQ(q.substr(q.size() - body.size()), body) << q;
    }
}

// The server receives a request on a re-used connection and closes it without answering (as when its
// idle timeout and the request cross): a request that may have reached the server is sent again only
// when its method is idempotent. POST and PATCH fail and reach the server exactly once.
TEST(Client, ClosedAfterTheRequestArrivedOnlyIdempotentMethodsAreResent) {
    TestServer server([](Conn& c) {
        std::string req;
        if (!c.read_request(&req)) return;
        c.write(kHello);
        if (req.rfind("GET /setup ", 0) == 0) {  // the request after the setup GET goes unanswered
            c.read_request();
            c.close();
            return;
        }
        while (c.read_request()) c.write(kHello);
    });
    const auto count = [&](const std::string& start) {
        int n = 0;
        for (const auto& q : server.requests()) n += q.rfind(start, 0) == 0;
        return n;
    };
    for (const std::string method : {"POST", "PATCH", "GET", "PUT", "DELETE"}) {
        Client c(2s);
        const std::string start = method + " /" + method + " HTTP/1.1\r\n";
        ASSERT_EQ(c.get(server.url("/setup")), 200);
        if (method == "POST" || method == "PATCH") {
            try {
                c.request(method, server.url("/" + method), {}, "once");
                FAIL() << method << ": no error";
            } catch (const beast_client::ConnectionError& e) {
                EXPECT_NE(std::string(e.what()).find(method + " is not idempotent: not re-sent"), std::string::npos)
                    << e.what();
            }
            EXPECT_EQ(c.connections_opened(), 1u) << method;
            EXPECT_EQ(count(start), 1) << method;
        } else {
            EXPECT_EQ(c.request(method, server.url("/" + method), {}, "twice").status, 200) << method;
            EXPECT_EQ(c.connections_opened(), 2u) << method;
            EXPECT_EQ(count(start), 2) << method;  // RFC 9110 9.2.2: a repeat has the effect of one request
        }
    }
}

TEST(Client, FreshConnectionIsNeverRetried) {
    TestServer server([](Conn& c) {
        c.read_request();
        c.close();  // no response at all
    });
    Client c(2s);
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(server.port())), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(server.accepts(), 1);
}

TEST(Client, NoRetryOnceTheResponseStarted) {
    TestServer server([](Conn& c) {
        if (!c.read_request()) return;
        c.write(kHello);
        if (!c.read_request()) return;
        c.write("HTTP/1.1 200 OK\r\nContent-Le");  // the response starts, then the connection dies
        c.close();
    });
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_THROW(c.get(server.url()), beast_client::ConnectionError);
    EXPECT_EQ(server.accepts(), 1);
}

// ---- http://: the calling thread's blocking send and receive ------------------------------------------

// get() builds its request once per URL: the same bytes every time, a new URL's own, and a bad URL in
// between changes nothing.
TEST(Client, GetSendsTheSameRequestForAUrlAndANewOneForAnotherUrl) {
    TestServer server(answer_all(kHello));
    Client c(2s);
    EXPECT_EQ(c.get(server.url("/a")), 200);
    EXPECT_EQ(c.get(server.url("/a")), 200);
    EXPECT_THROW(c.get("http://"), beast_client::InvalidUrl);
    EXPECT_EQ(c.get(server.url("/b")), 200);
    EXPECT_EQ(c.get(server.url("/a")), 200);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 4u);
    const std::string head = " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(server.port()) +
                             "\r\nUser-Agent: beast-client/" + beast_client::version;
    EXPECT_EQ(reqs[0].rfind("GET /a" + head, 0), 0u) << reqs[0];
    EXPECT_EQ(reqs[1], reqs[0]);
    EXPECT_EQ(reqs[2].rfind("GET /b" + head, 0), 0u) << reqs[2];
    EXPECT_EQ(reqs[3], reqs[0]);
    EXPECT_EQ(server.accepts(), 1);
}

// The socket's timeouts are slices of the poll interval, cut at the deadline: a timeout shorter than the
// poll interval is not rounded up to it.
TEST(Client, TimeoutShorterThanThePollIntervalIsKept) {
    TestServer server([](Conn& c) { c.wait_closed(); });
    Client c(300ms, 10s);
    const auto t0 = Clock::now();
    EXPECT_THROW(c.get(server.url()), beast_client::TimeoutError);
    const double ms = ms_since(t0);
    EXPECT_GE(ms, 290.0);
    EXPECT_LT(ms, 2000.0);
    EXPECT_FALSE(c.connected());
}

// A body larger than the socket buffers, to a server that reads none of it: the send blocks, and the
// timeout and the cancel check still apply while sending.
TEST(Client, BlockedSendTimesOutAndIsCancelled) {
    std::atomic<bool> done{false};
    TestServer server([&](Conn&) {  // reads nothing
        while (!done) std::this_thread::sleep_for(5ms);
    });
    struct Done {  // before the server's destructor waits for its handlers
        std::atomic<bool>& done;
        ~Done() { done = true; }
    } finish{done};
    const std::string body(16u << 20, 'x');
    {
        Client c(300ms);
        try {
            c.request("POST", server.url(), {}, body);
            FAIL() << "no error";
        } catch (const beast_client::TimeoutError& e) {
            EXPECT_NE(std::string(e.what()).find("sending the request"), std::string::npos) << e.what();
        }
        EXPECT_FALSE(c.connected());
    }
    Client c(10s, 20ms);
    const auto t0 = Clock::now();
    EXPECT_THROW(c.request("POST", server.url(), {}, body, [&] { return ms_since(t0) > 100.0; }),
                 beast_client::Cancelled);
    EXPECT_LT(ms_since(t0), 2000.0);
    EXPECT_FALSE(c.connected());
}

// ---- errors -------------------------------------------------------------------------------------

TEST(Client, ConnectionRefused) {
    const auto port = unused_port();
    Client c(2s);
    try {
        c.get("http://127.0.0.1:" + std::to_string(port) + "/");
        FAIL() << "no error";
    } catch (const beast_client::ConnectionError& e) {
        EXPECT_EQ(e.kind(), beast_client::ConnectionError::Kind::refused);
        const std::string what = e.what();
        EXPECT_NE(what.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << what;
        EXPECT_NE(what.find("refused"), std::string::npos) << what;
    }
    EXPECT_FALSE(c.connected());
}

TEST(Client, ServerThatNeverAnswersTimesOut) {
    TestServer server([](Conn& c) { c.wait_closed(); });
    Client c(300ms);
    const auto t0 = Clock::now();
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::TimeoutError& e) {
        EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    }
    const double ms = ms_since(t0);
    EXPECT_GE(ms, 290.0);
    EXPECT_LT(ms, 1000.0);
    EXPECT_FALSE(c.connected());
}

TEST(Client, TimeoutBoundsTheWholeRequestNotEachRead) {
    // headers at once, then one body byte every 50 ms: each read is quick, the whole is not
    TestServer server([](Conn& c) {
        if (!c.read_request()) return;
        c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
        for (int i = 0; i < 100; ++i) {
            if (!c.write("x")) return;
            std::this_thread::sleep_for(50ms);
        }
    });
    Client c(300ms);
    const auto t0 = Clock::now();
    EXPECT_THROW(c.get(server.url()), beast_client::TimeoutError);
    EXPECT_LT(ms_since(t0), 1000.0);
    EXPECT_GT(c.last_body_bytes(), 0u);  // what arrived before the timeout
}

TEST(Client, GarbageStatusLineIsAProtocolError) {
    TestServer server(answer_all("FOO BAR BAZ\r\n\r\n"));
    Client c(2s);
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::ProtocolError& e) {
        EXPECT_NE(std::string(e.what()).find("malformed HTTP response"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(c.connected());
}

TEST(Client, BadStatusCodeAndBadHeaderAreProtocolErrors) {
    TestServer a(answer_all("HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n"));
    TestServer b(answer_all("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"));
    TestServer d(answer_all("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"));
    Client c(2s);
    EXPECT_THROW(c.get(a.url()), beast_client::ProtocolError);
    EXPECT_THROW(c.get(b.url()), beast_client::ProtocolError);
    EXPECT_THROW(c.get(d.url()), beast_client::ProtocolError);
}

// Documented behaviour: the server closing in the middle of the body is a ConnectionError
// ("closed by the server before the response was complete"), not a ProtocolError.
TEST(Client, CloseMidBodyIsAConnectionError) {
    TestServer server([](Conn& c) {
        if (c.read_request()) c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
        c.close();
    });
    Client c(2s);
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("before the response was complete"), std::string::npos) << e.what();
    }
    EXPECT_EQ(c.last_body_bytes(), 3u);
    EXPECT_EQ(server.accepts(), 1);
}

TEST(Client, CancelCallbackStopsTheRequestPromptly) {
    TestServer server([](Conn& c) { c.wait_closed(); });
    TestServer good(answer_all(kHello));
    Client c(10s, 20ms);
    const auto t0 = Clock::now();
    int polls = 0;
    EXPECT_THROW(c.get(server.url(),
                       [&] {
                           ++polls;
                           return ms_since(t0) > 100.0;
                       }),
                 beast_client::Cancelled);
    const double ms = ms_since(t0);
    EXPECT_GE(ms, 100.0);
    EXPECT_LT(ms, 600.0);
    EXPECT_GE(polls, 3);
    EXPECT_FALSE(c.connected());
    EXPECT_EQ(c.get(good.url()), 200);  // still usable
}

TEST(Client, CancelCallbackExceptionPropagates) {
    TestServer server([](Conn& c) { c.wait_closed(); });
    Client c(10s, 20ms);
    EXPECT_THROW(c.get(server.url(), []() -> bool { throw std::range_error("from callback"); }), std::range_error);
    EXPECT_FALSE(c.connected());
}

TEST(Client, CancelCallbackIsNotCalledForFastRequests) {
    TestServer server(answer_all(kHello));
    Client c(2s, 1s);
    int polls = 0;
    EXPECT_EQ(c.get(server.url(),
                    [&] {
                        ++polls;
                        return true;
                    }),
              200);
    EXPECT_EQ(polls, 0);
}

TEST(Client, InterimResponsesAreSkipped) {
    TestServer server(
        answer_all("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
                   "HTTP/1.1 100 Continue\r\n\r\n" +
                   kHello));
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(c.last_body_bytes(), 5u);
    const auto r = c.request("GET", server.url());
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "hello");
    EXPECT_EQ(server.accepts(), 1);
}

TEST(Client, Http10ResponseClosesTheConnection) {
    TestServer server(answer_all("HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello"));
    Client c(2s);
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_FALSE(c.connected());
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(server.accepts(), 2);
}

TEST(Client, HeadersOverTheLimitAreAProtocolError) {
    // 9 MiB of headers in 1 MiB fields, more than the 8 MiB limit
    std::string head = "HTTP/1.1 200 OK\r\n";
    const std::string big(1024 * 1024, 'a');
    for (int i = 0; i < 9; ++i) head += "X-Big-" + std::to_string(i) + ": " + big + "\r\n";
    TestServer server(answer_all(head + "Content-Length: 5\r\n\r\nhello"));
    Client c(5s);
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::ProtocolError& e) {
        EXPECT_NE(std::string(e.what()).find("exceed"), std::string::npos) << e.what();
    }
}
