// One Client shared by threads: its pool of connections per origin, max_connections (a request waits for a
// free connection, at most its connect timeout and what is left of its total one), a stream holding its
// connection, origins that do not wait for each other. Against the tiny raw-socket server of test_server.hpp.
// Nothing here asserts a speed: counts of connections and requests in flight at the server, and outcomes.
#include "beast_client/client.hpp"
#include "test_server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using beast_client::Client;
using beast_client::Timeouts;
using namespace test_support;

namespace {

// Counts the requests the server is answering at once, and the most there ever were.
struct InFlight {
    std::atomic<int> now{0};
    std::atomic<int> most{0};
    void enter() {
        const int n = ++now;
        int m = most.load();
        while (n > m && !most.compare_exchange_weak(m, n)) {
        }
    }
    void leave() { --now; }
};

// Answers every request with "hello" after `delay`, counting the requests in flight.
TestServer::Handler slow_hello(InFlight& in_flight, std::chrono::milliseconds delay) {
    return [&in_flight, delay](Conn& c) {
        while (c.read_request()) {
            in_flight.enter();
            std::this_thread::sleep_for(delay);
            in_flight.leave();
            c.write(kHello);
        }
    };
}

Client pooled(std::size_t max_connections, std::optional<std::chrono::nanoseconds> connect = std::nullopt) {
    return Client(Timeouts{5s, connect, std::nullopt}, {}, 50ms, max_connections);
}

// Runs `fn(thread index)` on `n` threads and joins them.
template <class Fn>
void on_threads(int n, Fn fn) {
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t) threads.emplace_back(fn, t);
    for (auto& t : threads) t.join();
}

}  // namespace

TEST(Pool, OneClientServesManyThreads) {
    InFlight in_flight;
    TestServer server(slow_hello(in_flight, 1ms));
    Client c = pooled(0);
    std::atomic<int> ok{0};
    std::atomic<int> wrong{0};
    on_threads(8, [&](int) {
        for (int i = 0; i < 40; ++i) {
            std::size_t bytes = 0;
            try {
                if (c.get(server.url("/x"), bytes) == 200 && bytes == 5)
                    ++ok;
                else
                    ++wrong;
            } catch (const std::exception& e) {
                ADD_FAILURE() << e.what();
                ++wrong;
            }
        }
    });
    EXPECT_EQ(ok.load(), 8 * 40);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(server.requests().size(), 8u * 40u);
    EXPECT_LE(server.accepts(), 8);  // a connection carries one request at a time, and is re-used
    EXPECT_EQ(static_cast<int>(c.connections_opened()), server.accepts());
    EXPECT_TRUE(c.connected());
}

TEST(Pool, MaxConnectionsBoundsTheConnectionsPerOrigin) {
    InFlight in_flight;
    TestServer server(slow_hello(in_flight, 5ms));
    Client c = pooled(2);
    EXPECT_EQ(c.max_connections(), 2u);
    std::atomic<int> ok{0};
    on_threads(6, [&](int) {
        for (int i = 0; i < 10; ++i) {
            try {
                if (c.get(server.url()) == 200) ++ok;
                const auto r = c.request("GET", server.url());
                if (r.status == 200 && r.body == "hello") ++ok;
            } catch (const std::exception& e) {
                ADD_FAILURE() << e.what();
            }
        }
    });
    EXPECT_EQ(ok.load(), 6 * 10 * 2);
    EXPECT_LE(server.accepts(), 2);
    EXPECT_LE(in_flight.most.load(), 2);
    EXPECT_EQ(c.connections_opened(), static_cast<std::size_t>(server.accepts()));
}

TEST(Pool, WaitingForAFreeConnectionEndsWithTheConnectTimeout) {
    InFlight in_flight;
    TestServer server(slow_hello(in_flight, 800ms));
    Client c = pooled(1, 150ms);
    std::atomic<int> status{0};
    std::thread holder([&] { status = c.get(server.url()); });
    ASSERT_TRUE(server.wait_requests(1));  // the only connection is busy
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::TimeoutError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("no free connection to http://127.0.0.1:" + std::to_string(server.port())),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("max_connections (1)"), std::string::npos) << what;
    }
    holder.join();
    EXPECT_EQ(status.load(), 200);
    EXPECT_EQ(server.accepts(), 1);
    EXPECT_EQ(c.get(server.url()), 200);  // the connection is free again
    EXPECT_EQ(server.accepts(), 1);
}

TEST(Pool, AWaitingRequestGetsTheConnectionHandedBack) {
    InFlight in_flight;
    TestServer server(slow_hello(in_flight, 100ms));
    Client c = pooled(1);
    std::atomic<int> ok{0};
    on_threads(3, [&](int) {
        if (c.get(server.url()) == 200) ++ok;
    });
    EXPECT_EQ(ok.load(), 3);
    EXPECT_EQ(server.accepts(), 1);
    EXPECT_EQ(in_flight.most.load(), 1);
}

TEST(Pool, TheCancelCheckIsCalledWhileWaiting) {
    InFlight in_flight;
    TestServer server(slow_hello(in_flight, 600ms));
    Client c(Timeouts{5s, std::nullopt, std::nullopt}, {}, 20ms, 1);
    std::thread holder([&] { c.get(server.url()); });
    ASSERT_TRUE(server.wait_requests(1));
    int polls = 0;
    EXPECT_THROW(c.get(server.url(), [&] { return ++polls >= 2; }), beast_client::Cancelled);
    EXPECT_EQ(polls, 2);
    holder.join();
}

TEST(Pool, AStreamHoldsItsConnectionUntilItsBodyIsRead) {
    TestServer server(answer_all(kHello));
    Client c = pooled(1, 200ms);
    auto stream = c.stream("GET", server.url(), {}, {}, {});
    EXPECT_THROW(c.get(server.url()), beast_client::TimeoutError);  // its connection is the only one
    std::string chunk;
    std::string body;
    while (stream->next(chunk)) body += chunk;
    EXPECT_EQ(body, "hello");
    EXPECT_EQ(c.get(server.url()), 200);  // handed back at the end of the body
    EXPECT_EQ(server.accepts(), 1);
    stream.reset();
    auto closed = c.stream("GET", server.url(), {}, {}, {});
    closed->close();  // before the body: the connection is closed and its slot freed
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(server.accepts(), 2);
}

TEST(Pool, OriginsDoNotWaitForEachOther) {
    InFlight slow_in_flight;
    TestServer slow(slow_hello(slow_in_flight, 600ms));
    TestServer fast(answer_all(kHello));
    Client c = pooled(1, 150ms);
    std::atomic<int> status{0};
    std::thread holder([&] { status = c.get(slow.url()); });
    ASSERT_TRUE(slow.wait_requests(1));
    EXPECT_EQ(c.get(fast.url()), 200);  // another origin: its own connections
    EXPECT_EQ(c.request("GET", fast.url()).body, "hello");
    holder.join();
    EXPECT_EQ(status.load(), 200);
}

TEST(Pool, ARefusedConnectionFreesItsSlot) {
    const std::string url = "http://127.0.0.1:" + std::to_string(unused_port()) + "/";
    Client c = pooled(1, 500ms);
    for (int i = 0; i < 3; ++i) EXPECT_THROW(c.get(url), beast_client::ConnectionError);
    EXPECT_FALSE(c.connected());
}

TEST(Pool, CloseClosesTheIdleConnections) {
    TestServer server(answer_all(kHello));
    Client c = pooled(0);
    on_threads(3, [&](int) {
        for (int i = 0; i < 5; ++i) EXPECT_EQ(c.get(server.url()), 200);
    });
    EXPECT_TRUE(c.connected());
    c.close();
    EXPECT_FALSE(c.connected());
    const int before = server.accepts();
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(server.accepts(), before + 1);
}
