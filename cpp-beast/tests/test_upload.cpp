// A body streamed as it is sent (RequestOptions::upload, Transfer-Encoding: chunked): framing, a source that
// throws, the redirects it cannot follow, and the retry rule (idempotent methods only, never a streamed body).
#include "beast_client/client.hpp"
#include "test_server.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
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
    return [pieces, next, calls](std::string& chunk) {
        if (calls) ++*calls;
        if (*next == pieces.size()) return false;
        chunk = pieces[(*next)++];
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

TEST(Upload, ASourceThatThrowsEndsTheRequestWithItsException) {
    TestServer server(echo_chunked());
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    int calls = 0;
    o.upload = [&calls](std::string& chunk) -> bool {
        if (++calls == 1) {
            chunk = "first";
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
