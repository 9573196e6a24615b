// Decoding beyond gzip / deflate (test_features.cpp): br and zstd through send() and stream(), their broken and
// truncated bodies, zstd's window limit (RFC 9659), and a stream whose last network piece decodes to more than
// one piece's worth (output the decoder held back comes out before the end).
#include "beast_client/client.hpp"
#include "compress.hpp"
#include "test_server.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace test_support;
using beast_client::Client;
using beast_client::RequestOptions;
using beast_client::Timeouts;

namespace {

std::string response(const std::string& coding, const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Encoding: " + coding + "\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
}

// Answers /<anything> with `make(path)`; records the requests.
TestServer::Handler by_path(std::function<std::string(const std::string& path)> make) {
    return [make](Conn& c) {
        std::string req;
        while (c.read_request(&req)) {
            const auto sp = req.find(' ');
            c.write(make(req.substr(sp + 1, req.find(' ', sp + 1) - sp - 1)));
        }
    };
}

std::string read_stream(Client& c, const std::string& url, int& pieces) {
    auto s = c.stream("GET", url, {}, {}, RequestOptions{});
    std::string all, chunk;
    pieces = 0;
    while (s->next(chunk)) {
        EXPECT_FALSE(chunk.empty());
        all += chunk;
        ++pieces;
    }
    return all;
}

}  // namespace

TEST(Codings, BrAndZstdAreDecodedAndOffered) {
    const std::string body = text(300000);
    TestServer server(by_path([&](const std::string& path) {
        if (path == "/br") return response("br", brotli(body));
        if (path == "/zstd") return response("zstd", zstd(body));
        if (path == "/ZSTD") return response("ZStd", zstd(body));  // codings are case-insensitive
        if (path == "/frames") return response("zstd", zstd(body.substr(0, 1000)) + zstd(body.substr(1000)));
        return response("gzip, br", gzip(body));  // stacked: returned as received
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    for (const char* p : {"/br", "/zstd", "/ZSTD", "/frames"}) {
        const auto r = c.send("GET", server.url(p), {}, {}, RequestOptions{});
        EXPECT_EQ(r.body.size(), body.size()) << p;
        EXPECT_TRUE(r.body == body) << p;
    }
    EXPECT_NE(server.requests()[0].find("\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n"), std::string::npos);
    EXPECT_TRUE(c.send("GET", server.url("/stacked"), {}, {}, RequestOptions{}).body == gzip(body));
    int pieces = 0;
    for (const char* p : {"/br", "/zstd"}) {
        EXPECT_TRUE(read_stream(c, server.url(p), pieces) == body) << p;
        EXPECT_GT(pieces, 1) << p;  // about 64 KiB each
    }
    RequestOptions raw;
    raw.decompress = false;
    EXPECT_TRUE(c.send("GET", server.url("/br"), {}, {}, raw).body == brotli(body));
}

TEST(Codings, BrokenAndTruncatedBodiesAreProtocolErrors) {
    const std::string body = text(100000);
    TestServer server(by_path([&](const std::string& path) {
        if (path == "/br-cut") return response("br", brotli(body).substr(0, 200));
        if (path == "/zstd-cut") return response("zstd", zstd(body).substr(0, 200));
        if (path == "/br-bad") return response("br", "not brotli at all, really not");
        if (path == "/zstd-bad") return response("zstd", "not zstd at all");
        if (path == "/empty") return response("zstd", "");
        return response("zstd", zstd(body, 24));  // a 16 MiB window: over RFC 9659's 8 MiB
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    for (const char* p : {"/br-cut", "/zstd-cut", "/br-bad", "/zstd-bad"}) {
        try {
            c.send("GET", server.url(p), {}, {}, RequestOptions{});
            ADD_FAILURE() << p << ": no error";
        } catch (const beast_client::ProtocolError& e) {
            EXPECT_NE(std::string(e.what()).find("cannot decode"), std::string::npos) << e.what();
        }
    }
    try {
        c.send("GET", server.url("/window"), {}, {}, RequestOptions{});
        ADD_FAILURE() << "no error";
    } catch (const beast_client::ProtocolError& e) {
        EXPECT_NE(std::string(e.what()).find("8 MiB"), std::string::npos) << e.what();
    }
    EXPECT_EQ(c.send("GET", server.url("/empty"), {}, {}, RequestOptions{}).body, "");  // no stream at all: fine
    int pieces = 0;
    EXPECT_THROW(read_stream(c, server.url("/br-cut"), pieces), beast_client::ProtocolError);
}

TEST(Codings, MaxBodySizeCountsTheDecodedBody) {
    const std::string body(4 << 20, 'z');  // 4 MiB of one byte: a few KiB compressed
    TestServer server(by_path([&](const std::string& path) {
        return path == "/br" ? response("br", brotli(body)) : response("zstd", zstd(body));
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    o.max_body_size = 1 << 20;
    EXPECT_THROW(c.send("GET", server.url("/br"), {}, {}, o), beast_client::BodyTooLarge);
    EXPECT_THROW(c.send("GET", server.url("/zstd"), {}, {}, o), beast_client::BodyTooLarge);
    o.max_body_size = body.size();
    EXPECT_EQ(c.send("GET", server.url("/br"), {}, {}, o).body.size(), body.size());
}

// A highly compressed body whose last bytes arrive in one read: far more than a piece's worth of output (64 KiB)
// that the decoder holds back, to be handed out piece by piece after the network has nothing more.
TEST(Codings, OutputHeldBackAtTheEndOfTheBodyComesOutWhole) {
    const std::string body(8 << 20, 'a');
    TestServer server(by_path([&](const std::string& path) {
        if (path == "/gzip") return response("gzip", gzip(body));
        if (path == "/br") return response("br", brotli(body));
        return response("zstd", zstd(body));
    }));
    Client c(Timeouts{10s, {}, {}}, {});
    for (const char* p : {"/gzip", "/br", "/zstd"}) {
        int pieces = 0;
        const std::string got = read_stream(c, server.url(p), pieces);
        EXPECT_EQ(got.size(), body.size()) << p;
        EXPECT_TRUE(got == body) << p;
        EXPECT_GE(pieces, 8) << p;  // at most about 64 KiB at a time
    }
    EXPECT_EQ(server.accepts(), 1);  // each read to its end: the connection kept
}
