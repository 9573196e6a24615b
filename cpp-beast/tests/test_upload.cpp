// A body streamed as it is sent (RequestOptions::upload, Transfer-Encoding: chunked): framing, a source that
// throws, the redirects it cannot follow, the retry rule (never a streamed body; a POST only when not a byte
// of it went out), and the server's answer to a body it did not read.
#include "async_support.hpp"
#include "beast_client/async_client.hpp"
#include "beast_client/client.hpp"
#include "test_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace test_support;
using beast_client::BodySource;
using beast_client::Client;
using beast_client::RequestOptions;
using beast_client::Timeouts;

namespace {

// A source giving `pieces` one by one (an empty one among them is skipped), counting its calls.
BodySource pieces_of(std::vector<std::string> pieces, int* calls = nullptr) {
    auto next = std::make_shared<std::size_t>(0);
    return [pieces, next, calls](std::string_view& piece) {
        if (calls) ++*calls;
        if (*next == pieces.size()) return false;
        piece = pieces[(*next)++];  // the source's copy of the list holds it
        return true;
    };
}

// Reads the rest of a chunked body, to its last chunk (the head was read by read_request()).
bool read_chunks(Conn& c, std::string& wire) {
    while (wire.size() < 5 || wire.compare(wire.size() - 5, 5, "0\r\n\r\n") != 0) {
        std::string more;
        if (!c.read_some(more)) return false;
        wire += more;
    }
    return true;
}

std::string dechunk(const std::string& wire) {
    std::string out;
    std::size_t pos = 0;
    for (;;) {
        const auto eol = wire.find("\r\n", pos);
        if (eol == std::string::npos) return out + "<truncated>";
        const std::size_t size = std::stoul(wire.substr(pos, eol - pos), nullptr, 16);
        if (size == 0) return out;
        out += wire.substr(eol + 2, size);
        pos = eol + 2 + size + 2;
    }
}

// A server that reads a chunked body to its last chunk and answers with the body de-chunked.
TestServer::Handler echo_chunked(std::vector<std::string>* heads = nullptr) {
    return [heads](Conn& c) {
        std::string head;
        while (c.read_request(&head)) {  // the head: a chunked body has no Content-Length
            std::string wire;
            if (!read_chunks(c, wire)) return;
            if (heads) heads->push_back(head);
            const std::string got = dechunk(wire);
            c.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(got.size()) + "\r\n\r\n" + got);
        }
    };
}

}  // namespace

TEST(Upload, PiecesGoChunkedAsTheSourceGivesThem) {
    std::vector<std::string> heads;
    TestServer server(echo_chunked(&heads));
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    int calls = 0;
    o.upload = pieces_of({"first ", "", std::string(100000, 'x'), " last"}, &calls);
    const auto r = c.send("PUT", server.url("/up"), {{"Content-Type", "text/plain"}}, {}, o);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "first " + std::string(100000, 'x') + " last");
    EXPECT_EQ(calls, 5);  // four pieces and the end
    ASSERT_EQ(heads.size(), 1u);
    EXPECT_NE(heads[0].find("\r\nTransfer-Encoding: chunked\r\n"), std::string::npos) << heads[0];
    EXPECT_EQ(heads[0].find("Content-Length"), std::string::npos) << heads[0];
    o.upload = pieces_of({});  // an empty body is the last chunk alone
    EXPECT_EQ(c.send("POST", server.url("/up"), {}, {}, o).body, "");
    EXPECT_EQ(server.accepts(), 1);
    o.upload = pieces_of({"a"});
    EXPECT_THROW(c.send("POST", server.url("/up"), {}, "and a body", o), std::invalid_argument);
}

// Pieces far larger than the socket's buffer, to a server that waits before it reads: each chunk's gathering write
// (size line, piece, CRLF) is taken a part at a time, across the send timeout's slices, and arrives whole and in order.
TEST(Upload, LargePiecesTakenInPartsArriveWhole) {
    TestServer server([](Conn& c) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        echo_chunked()(c);
    });
    std::vector<std::string> pieces;
    std::string all;
    for (const std::size_t size : {std::size_t{3}, std::size_t{3} << 20, std::size_t{17}, std::size_t{1} << 20}) {
        std::string p(size, '\0');
        for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<char>('a' + (i + all.size()) % 23);
        all += p;
        pieces.push_back(std::move(p));
    }
    Client c(Timeouts{10s, {}, {}}, {});
    RequestOptions o;
    o.upload = pieces_of(pieces);
    const auto r = c.send("POST", server.url("/up"), {}, {}, o);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body.size(), all.size());
    EXPECT_TRUE(r.body == all);
}

TEST(Upload, ASourceThatThrowsEndsTheRequestWithItsException) {
    TestServer server(echo_chunked());
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    int calls = 0;
    o.upload = [&calls](std::string_view& piece) -> bool {
        if (++calls == 1) {
            piece = "first";
            return true;
        }
        throw std::domain_error("the source failed");
    };
    EXPECT_THROW(c.send("POST", server.url("/up"), {}, {}, o), std::domain_error);
    EXPECT_FALSE(c.connected());  // half a body went out: the connection cannot carry another request
    o.upload = pieces_of({"ok"});
    EXPECT_EQ(c.send("POST", server.url("/up"), {}, {}, o).body, "ok");
}

TEST(Upload, A307IsReturnedA303IsFollowedWithoutTheBody) {
    TestServer server([](Conn& c) {
        std::string head;
        while (c.read_request(&head)) {
            std::string wire;  // the body: read, not used
            if (head.find("Transfer-Encoding: chunked") != std::string::npos && !read_chunks(c, wire)) return;
            const auto sp = head.find(' ');
            const std::string path = head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1);
            if (path == "/307" || path == "/303")
                c.write("HTTP/1.1 " + path.substr(1) + " Moved\r\nLocation: /final\r\nContent-Length: 0\r\n\r\n");
            else
                c.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(head.find("\r\n")) + "\r\n\r\n" +
                        head.substr(0, head.find("\r\n")));
        }
    });
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    o.upload = pieces_of({"body"});
    EXPECT_EQ(c.send("POST", server.url("/307"), {}, {}, o).status, 307);  // the body cannot be sent twice
    o.upload = pieces_of({"body"});
    const auto r = c.send("POST", server.url("/303"), {}, {}, o);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "GET /final HTTP/1.1");
}

// The server takes the request on a kept-alive connection and closes it without answering (its idle timeout
// and the request crossed): a PUT, idempotent, is sent again when its body is bytes, never when it is streamed.
TEST(Upload, AStreamedBodyIsNeverSentAgain) {
    TestServer server([](Conn& c) {
        std::string req;
        if (!c.read_request(&req)) return;
        c.write(kHello);
        c.read_request();  // the next request goes unanswered
        c.close();
    });
    Client c(Timeouts{5s, {}, {}}, {});
    ASSERT_EQ(c.get(server.url("/setup")), 200);
    RequestOptions o;
    o.upload = pieces_of({"once"});
    EXPECT_THROW(c.send("PUT", server.url("/streamed"), {}, {}, o), beast_client::ConnectionError);
    EXPECT_EQ(c.connections_opened(), 1u);
    ASSERT_EQ(c.get(server.url("/setup")), 200);  // a new connection, kept
    EXPECT_EQ(c.send("PUT", server.url("/bytes"), {}, "twice", RequestOptions{}).status, 200);
    EXPECT_EQ(c.connections_opened(), 3u);  // re-sent on a third one
}

// The server answers a request whose body it does not want (a 413) and closes, unread data and all (a reset):
// the client's write fails, and the answer that came before is the response (RFC 9112 9.5), the connection
// closed after it. A streamed body and a buffered one, the Client's and the AsyncClient's.
TEST(Upload, TheAnswerToABodyTheServerDidNotReadIsTheResponse) {
    TestServer server([](Conn& c) {
        if (!c.read_request()) return;  // the head (and what came with it)
        c.write("HTTP/1.1 413 Content Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbig!");
        c.close();
    });
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    const std::string piece(64 * 1024, 'x');
    int left = 256;  // 16 MiB: far more than the socket buffers hold
    o.upload = [&](std::string_view& next) {
        if (left-- == 0) return false;
        next = piece;
        return true;
    };
    const auto r = c.send("POST", server.url("/up"), {}, {}, o);
    EXPECT_EQ(r.status, 413);
    EXPECT_EQ(r.body, "big!");
    EXPECT_FALSE(c.connected());
    beast_client::IoThread io;
    beast_client::AsyncClient a(io, Timeouts{5s, {}, {}}, {});
    Result<beast_client::Response> answer;
    a.request("POST", server.url("/up"), {}, std::string(16 << 20, 'y'), answer.callback());
    EXPECT_EQ(answer.get().status, 413);
}

// The server closes (FIN) or resets a kept-alive connection right after answering on it, without saying so
// (tinyproxy does so after every answer): the next request, a POST, which could not be sent again, finds it
// closed (the idle check runs before every such request; a reset one takes no byte of it) and goes out once,
// on a new connection.
TEST(Upload, APostOnAConnectionTheServerClosedGoesOutOnceOnANewOne) {
    for (const bool reset : {false, true}) {
        std::promise<void> closed;
        auto was_closed = closed.get_future();
        TestServer server([&](Conn& c) {
            std::string req;
            if (!c.read_request(&req)) return;
            c.write(kHello);
            if (c.index() == 0) {
                if (reset)
                    c.reset();
                else
                    c.close();
                closed.set_value();
                return;
            }
            while (c.read_request()) c.write(kHello);
        });
        Client c(Timeouts{5s, {}, {}}, {});
        ASSERT_EQ(c.get(server.url("/first")), 200);
        ASSERT_EQ(was_closed.wait_for(5s), std::future_status::ready);
        std::this_thread::sleep_for(1ms);  // the FIN or RST is in (on loopback, at once)
        EXPECT_EQ(c.request("POST", server.url("/post"), {}, "once").status, 200) << reset;
        EXPECT_EQ(c.connections_opened(), 2u) << reset;
        int posts = 0;
        for (const auto& q : server.requests()) posts += q.rfind("POST /post ", 0) == 0;
        EXPECT_EQ(posts, 1) << reset;
    }
}

// ---- AsyncClient: the body from an AsyncBodySource -----------------------------------------------------------

namespace {

using beast_client::AsyncBodySource;
using beast_client::PiecesCallback;

// Gives its answers one by one, each from a thread of its own (as a Python event loop answers the IoThread), or holds
// the request's callback (`hold`) and gives nothing; counts its calls and closes.
class Pieces : public AsyncBodySource {
public:
    // each element: the pieces of one answer to next()
    explicit Pieces(std::vector<std::vector<std::string>> pieces, bool hold = false)
        : pieces_(std::move(pieces)), hold_(hold) {}
    ~Pieces() override {
        for (auto& t : threads_) t.join();
    }
    void next(PiecesCallback done) override {
        ++calls;
        std::lock_guard<std::mutex> lock(mutex_);
        if (hold_) {
            held_ = std::move(done);
            return;
        }
        std::vector<std::string> given;  // none: the end
        if (next_ < pieces_.size()) given = pieces_[next_++];
        threads_.emplace_back([done = std::move(done), given] { done(given, nullptr); });
    }
    void close() noexcept override {
        ++closes;
        std::lock_guard<std::mutex> lock(mutex_);
        held_ = nullptr;
    }
    bool holding() {
        std::lock_guard<std::mutex> lock(mutex_);
        return bool(held_);
    }
    std::atomic<int> calls{0};
    std::atomic<int> closes{0};

private:
    std::mutex mutex_;
    std::vector<std::vector<std::string>> pieces_;
    std::size_t next_ = 0;
    bool hold_;
    PiecesCallback held_;
    std::vector<std::thread> threads_;
};

}  // namespace

TEST(AsyncUpload, PiecesGoChunkedAsTheSourceGivesThem) {
    std::vector<std::string> heads;
    TestServer server(echo_chunked(&heads));
    beast_client::IoThread io;
    beast_client::AsyncClient c(io, Timeouts{5s, {}, {}}, {});
    using Answers = std::vector<std::vector<std::string>>;
    auto source = std::make_shared<Pieces>(Answers{{"first "}, {""}, {std::string(100000, 'x'), "", " last"}});
    Result<beast_client::Response> r;
    c.send("PUT", server.url("/up"), {{"Content-Type", "text/plain"}}, {}, RequestOptions{}, r.callback(), source);
    EXPECT_EQ(r.get().body, "first " + std::string(100000, 'x') + " last");
    EXPECT_EQ(source->calls, 4);  // three answers (one of them empty) and the end
    EXPECT_EQ(source->closes, 1);
    ASSERT_EQ(heads.size(), 1u);
    EXPECT_NE(heads[0].find("\r\nTransfer-Encoding: chunked\r\n"), std::string::npos) << heads[0];
    EXPECT_EQ(heads[0].find("Content-Length"), std::string::npos) << heads[0];
    // an empty body is the last chunk alone; a stream's request body goes the same way, on the same connection
    Result<std::unique_ptr<beast_client::AsyncResponseStream>> s;
    c.stream("POST", server.url("/up"), {}, {}, RequestOptions{}, s.callback(), std::make_shared<Pieces>(Answers{}));
    auto stream = s.get();
    ASSERT_TRUE(stream);
    EXPECT_EQ(read_all(*stream), "");
    Result<beast_client::Response> again;
    c.send("POST", server.url("/up"), {}, {}, RequestOptions{}, again.callback(),
           std::make_shared<Pieces>(Answers{{"a"}, {"b"}}));
    EXPECT_EQ(again.get().body, "ab");
    EXPECT_EQ(server.accepts(), 1);
    EXPECT_THROW(c.send("POST", server.url("/up"), {}, "and a body", RequestOptions{}, again.callback(), source),
                 std::invalid_argument);
}

TEST(AsyncUpload, ASourceThatFailsEndsTheRequestWithItsError) {
    TestServer server(echo_chunked());
    beast_client::IoThread io;
    beast_client::AsyncClient c(io, Timeouts{5s, {}, {}}, {});
    struct Failing : AsyncBodySource {
        void next(PiecesCallback done) override {
            if (++calls == 1) return done({"first"}, nullptr);
            done({}, std::make_exception_ptr(std::domain_error("the source failed")));
        }
        void close() noexcept override { ++closes; }
        int calls = 0;
        int closes = 0;
    };
    auto source = std::make_shared<Failing>();
    Result<beast_client::Response> r;
    c.send("POST", server.url("/up"), {}, {}, RequestOptions{}, r.callback(), source);
    EXPECT_THROW(r.get(), std::domain_error);
    EXPECT_EQ(r.calls(), 1);
    Result<beast_client::Response> ok;  // half a body went out: that connection was closed
    c.send("POST", server.url("/up"), {}, {}, RequestOptions{}, ok.callback(),
           std::make_shared<Pieces>(std::vector<std::vector<std::string>>{{"ok"}}));
    EXPECT_EQ(ok.get().body, "ok");
    EXPECT_EQ(server.accepts(), 2);
    EXPECT_EQ(source->closes, 1);
}

// A source that never answers: cancel() and the total timeout end the request, the source is closed (its held
// callback dropped), the connection too.
TEST(AsyncUpload, CancelAndTheTimeoutEndARequestWaitingForItsSource) {
    TestServer server(echo_chunked());
    beast_client::IoThread io;
    beast_client::AsyncClient c(io, Timeouts{300ms, {}, {}}, {});
    auto waiting = std::make_shared<Pieces>(std::vector<std::vector<std::string>>{}, true);
    Result<beast_client::Response> cancelled;
    auto op = c.send("POST", server.url("/up"), {}, {}, RequestOptions{}, cancelled.callback(), waiting);
    for (int i = 0; i < 500 && !waiting->holding(); ++i) std::this_thread::sleep_for(1ms);
    ASSERT_TRUE(waiting->holding());
    op->cancel();
    EXPECT_THROW(cancelled.get(), beast_client::Cancelled);
    EXPECT_EQ(waiting->closes, 1);
    EXPECT_FALSE(waiting->holding());
    auto slow = std::make_shared<Pieces>(std::vector<std::vector<std::string>>{}, true);
    Result<beast_client::Response> timed_out;
    c.send("POST", server.url("/up"), {}, {}, RequestOptions{}, timed_out.callback(), slow);
    EXPECT_THROW(timed_out.get(), beast_client::TimeoutError);
    EXPECT_EQ(slow->closes, 1);
    EXPECT_EQ(server.accepts(), 2);  // each half-sent request's connection closed
}

TEST(AsyncUpload, A307IsReturnedA303IsFollowedWithoutTheBodyAndNothingIsSentTwice) {
    TestServer server([](Conn& c) {
        std::string head;
        while (c.read_request(&head)) {
            std::string wire;
            if (head.find("Transfer-Encoding: chunked") != std::string::npos && !read_chunks(c, wire)) return;
            const auto sp = head.find(' ');
            const std::string path = head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1);
            if (path == "/307" || path == "/303")
                c.write("HTTP/1.1 " + path.substr(1) + " Moved\r\nLocation: /final\r\nContent-Length: 0\r\n\r\n");
            else if (path == "/drop")
                return c.close();  // the request taken on a kept-alive connection, unanswered
            else
                c.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(head.find("\r\n")) + "\r\n\r\n" +
                        head.substr(0, head.find("\r\n")));
        }
    });
    beast_client::IoThread io;
    beast_client::AsyncClient c(io, Timeouts{5s, {}, {}}, {});
    auto body = [] { return std::make_shared<Pieces>(std::vector<std::vector<std::string>>{{"body"}}); };
    Result<beast_client::Response> r307, r303, dropped;
    c.send("POST", server.url("/307"), {}, {}, RequestOptions{}, r307.callback(), body());
    EXPECT_EQ(r307.get().status, 307);
    c.send("POST", server.url("/303"), {}, {}, RequestOptions{}, r303.callback(), body());
    EXPECT_EQ(r303.get().body, "GET /final HTTP/1.1");
    c.send("PUT", server.url("/drop"), {}, {}, RequestOptions{}, dropped.callback(), body());
    try {
        dropped.get();
        ADD_FAILURE() << "no error";
    } catch (const beast_client::ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("its body was streamed"), std::string::npos) << e.what();
    }
    int puts = 0;
    for (const auto& q : server.requests()) puts += q.rfind("PUT /drop ", 0) == 0;
    EXPECT_EQ(puts, 1);
}
