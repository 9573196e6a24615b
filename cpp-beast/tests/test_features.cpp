// send() / stream(): redirects, gzip / deflate, URL encoding, timeouts, the connection pool, streaming,
// against the raw-socket test server (test_server.hpp).
#include "beast_client/client.hpp"
#include "beast_client/cookies.hpp"
#include "test_server.hpp"

#include <boost/beast/zlib/deflate_stream.hpp>
#include <boost/crc.hpp>

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

using namespace test_support;
using beast_client::Client;
using beast_client::RequestOptions;
using beast_client::Timeouts;

namespace {

namespace zlib = boost::beast::zlib;

std::string raw_deflate(const std::string& data) {
    zlib::deflate_stream ds;
    ds.reset(6, 15, 8, zlib::Strategy::normal);
    std::string out(data.size() + 1024, '\0');
    zlib::z_params zs;
    zs.next_in = data.data();
    zs.avail_in = data.size();
    zs.next_out = &out[0];
    zs.avail_out = out.size();
    boost::system::error_code ec;
    ds.write(zs, zlib::Flush::finish, ec);
    EXPECT_TRUE(!ec || ec == zlib::error::end_of_stream) << ec.message();
    out.resize(zs.total_out);
    return out;
}

std::string gzip(const std::string& data) {
    std::string out("\x1f\x8b\x08\x08\0\0\0\0\0\x03", 10);  // FNAME set
    out += std::string("name.txt\0", 9);
    out += raw_deflate(data);
    boost::crc_32_type crc;
    crc.process_bytes(data.data(), data.size());
    for (std::uint32_t v : {static_cast<std::uint32_t>(crc.checksum()), static_cast<std::uint32_t>(data.size())})
        for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
    return out;
}

std::string zlib_wrap(const std::string& data) {
    std::string out("\x78\x9c", 2);
    out += raw_deflate(data);
    std::uint32_t a = 1, b = 0;
    for (unsigned char c : data) {
        a = (a + c) % 65521;
        b = (b + a) % 65521;
    }
    const std::uint32_t adler = (b << 16) | a;
    for (int i = 3; i >= 0; --i) out += static_cast<char>((adler >> (8 * i)) & 0xff);
    return out;
}

std::string response(const std::string& head, const std::string& body) {
    return "HTTP/1.1 " + head + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string path_of(const std::string& request) {
    const auto sp = request.find(' ');
    return request.substr(sp + 1, request.find(' ', sp + 1) - sp - 1);
}

bool has_line(const std::string& request, const std::string& line) {
    return request.find("\r\n" + line + "\r\n") != std::string::npos;
}

std::string text(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; s.size() < n; ++i) s += "line " + std::to_string(i) + " of a compressible body\n";
    s.resize(n);
    return s;
}

// A server whose answer depends on the request's path.
TestServer::Handler route(std::function<std::string(const std::string& request)> answer) {
    return [answer](Conn& c) {
        std::string req;
        while (c.read_request(&req)) {
            const std::string out = answer(req);
            if (out.empty()) {
                c.close();
                return;
            }
            c.write(out);
        }
    };
}

}  // namespace

// ---- URLs -----------------------------------------------------------------------------------------

TEST(Url, EncodeUrlEncodesSpacesAndNonAsciiAndKeepsEscapes) {
    using beast_client::encode_url;
    EXPECT_EQ(encode_url("http://h/a b?q=x y"), "http://h/a%20b?q=x%20y");
    EXPECT_EQ(encode_url("http://h/caf\xc3\xa9?q=\xc3\xa9"), "http://h/caf%C3%A9?q=%C3%A9");
    EXPECT_EQ(encode_url("http://h/a%20b?x=%2F&y=1#frag"), "http://h/a%20b?x=%2F&y=1");
    EXPECT_EQ(encode_url("http://h/{x}?'q'"), "http://h/%7Bx%7D?%27q%27");
    EXPECT_EQ(encode_url("http://h"), "http://h");
}

TEST(Url, AddQueryEncodesEverythingButUnreserved) {
    using beast_client::add_query;
    EXPECT_EQ(add_query("http://h/p", {{"a", "1"}, {"b c", "x/y&z=\xc3\xa9"}}),
              "http://h/p?a=1&b%20c=x%2Fy%26z%3D%C3%A9");
    EXPECT_EQ(add_query("http://h/p?x=1#f", {{"a", "-._~"}}), "http://h/p?x=1&a=-._~");
    EXPECT_EQ(add_query("http://h/p?", {{"a", ""}}), "http://h/p?a=");
    EXPECT_EQ(add_query("http://h/p", {}), "http://h/p");
}

TEST(Url, ResolveFollowsRfc3986) {
    using beast_client::resolve_url;
    const std::string base = "http://a:8080/b/c/d;p?q";
    EXPECT_EQ(resolve_url(base, "g"), "http://a:8080/b/c/g");
    EXPECT_EQ(resolve_url(base, "./g"), "http://a:8080/b/c/g");
    EXPECT_EQ(resolve_url(base, "/g"), "http://a:8080/g");
    EXPECT_EQ(resolve_url(base, "//g/x"), "http://g/x");
    EXPECT_EQ(resolve_url(base, "?y"), "http://a:8080/b/c/d;p?y");
    EXPECT_EQ(resolve_url(base, "../g"), "http://a:8080/b/g");
    EXPECT_EQ(resolve_url(base, "../../../g"), "http://a:8080/g");
    EXPECT_EQ(resolve_url(base, "g?y#s"), "http://a:8080/b/c/g?y");
    EXPECT_EQ(resolve_url(base, "https://other/x"), "https://other/x");
    EXPECT_THROW(resolve_url(base, "ftp://other/x"), beast_client::InvalidUrl);
}

// ---- redirects ------------------------------------------------------------------------------------

TEST(Send, FollowsRedirectsAndReportsTheFinalUrl) {
    TestServer server(route([](const std::string& req) {
        const std::string p = path_of(req);
        if (p == "/a") return response("301 Moved Permanently\r\nLocation: /b?x=1", "moved");
        if (p == "/b?x=1") return response("302 Found\r\nLocation: c", "");
        return response("200 OK\r\nX-Path: " + p, "final");
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    const auto r = c.send("GET", server.url("/a"), {}, {}, RequestOptions{});
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "final");
    EXPECT_EQ(r.reason, "OK");
    EXPECT_EQ(r.url, server.url("/c"));
    EXPECT_EQ(server.accepts(), 1);  // one keep-alive connection for the three requests

    RequestOptions no;
    no.follow_redirects = false;
    const auto r3 = c.send("GET", server.url("/a"), {}, {}, no);
    EXPECT_EQ(r3.status, 301);
    EXPECT_EQ(r3.body, "moved");
}

TEST(Send, RedirectMethodRules) {
    TestServer server(route([](const std::string& req) {
        const std::string p = path_of(req);
        if (p == "/303") return response("303 See Other\r\nLocation: /end", "");
        if (p == "/307") return response("307 Temporary Redirect\r\nLocation: /end", "");
        return response("200 OK", "");
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    c.send("POST", server.url("/303"), {{"Content-Type", "text/plain"}}, "data", RequestOptions{});
    c.send("POST", server.url("/307"), {{"Content-Type", "text/plain"}}, "data", RequestOptions{});
    c.send("HEAD", server.url("/303"), {}, {}, RequestOptions{});
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 6u);
    EXPECT_EQ(reqs[1].rfind("GET /end HTTP/1.1\r\n", 0), 0u) << reqs[1];
    EXPECT_EQ(reqs[1].find("data"), std::string::npos);
    EXPECT_EQ(reqs[1].find("Content-Type"), std::string::npos);
    EXPECT_EQ(reqs[3].rfind("POST /end HTTP/1.1\r\n", 0), 0u) << reqs[3];
    EXPECT_TRUE(has_line(reqs[3], "Content-Length: 4"));
    EXPECT_EQ(reqs[3].substr(reqs[3].size() - 4), "data");
    EXPECT_EQ(reqs[5].rfind("HEAD /end HTTP/1.1\r\n", 0), 0u) << reqs[5];
}

TEST(Send, TooManyRedirects) {
    TestServer server(route([](const std::string&) { return response("302 Found\r\nLocation: /loop", ""); }));
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    o.max_redirects = 3;
    try {
        c.send("GET", server.url("/start"), {}, {}, o);
        FAIL() << "no exception";
    } catch (const beast_client::TooManyRedirects& e) {
        EXPECT_NE(std::string(e.what()).find(server.url("/loop")), std::string::npos) << e.what();
    }
    EXPECT_EQ(server.requests().size(), 4u);
}

TEST(Send, AuthorizationDroppedAcrossHostsOnly) {
    TestServer target(answer_all(response("200 OK", "there")));
    const std::string other = "http://localhost:" + std::to_string(target.port()) + "/final";
    TestServer server(route([&](const std::string& req) {
        if (path_of(req) == "/same") return response("302 Found\r\nLocation: /final", "");
        if (path_of(req) == "/final") return response("200 OK", "here");
        return response("302 Found\r\nLocation: " + other, "");
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    const beast_client::Headers h{{"Authorization", "Bearer t"}, {"Cookie", "a=1"}, {"X-Keep", "1"}};
    EXPECT_EQ(c.send("GET", server.url("/other"), h, {}, RequestOptions{}).body, "there");
    EXPECT_EQ(c.send("GET", server.url("/same"), h, {}, RequestOptions{}).body, "here");
    const auto reqs = target.requests();
    ASSERT_EQ(reqs.size(), 1u);
    EXPECT_EQ(reqs[0].find("Authorization"), std::string::npos);
    EXPECT_EQ(reqs[0].find("Cookie"), std::string::npos);
    EXPECT_TRUE(has_line(reqs[0], "X-Keep: 1"));
    const auto mine = server.requests();
    ASSERT_EQ(mine.size(), 3u);  // /other, /same, /final (same origin: kept)
    EXPECT_TRUE(has_line(mine[2], "Authorization: Bearer t")) << mine[2];
}

TEST(Send, BadLocationIsAProtocolError) {
    for (const std::string location : {"ftp://x/y", "javascript:alert(1)", "http://[::1", "/a\tb", "http://h:0/"}) {
        TestServer server(answer_all(response("302 Found\r\nLocation: " + location, "")));
        Client c(Timeouts{5s, {}, {}}, {});
        EXPECT_THROW(c.send("GET", server.url("/"), {}, {}, RequestOptions{}), beast_client::ProtocolError) << location;
        EXPECT_EQ(server.requests().size(), 1u) << location;  // nothing where it points
    }
}

TEST(Send, AControlCharacterInTheUrlIsInvalidBeforeAnythingIsSent) {
    TestServer server(answer_all(response("200 OK", "")));
    Client c(Timeouts{5s, {}, {}}, {});
    for (const std::string& tail :
         std::vector<std::string>{"/a\r\nX: 1", "/a?q=\n", "/a\tb", std::string("/a\0b", 4), "/\x7f"}) {
        EXPECT_THROW(c.send("GET", server.url(tail), {}, {}, RequestOptions{}), beast_client::InvalidUrl);
        EXPECT_THROW(c.stream("GET", server.url(tail), {}, {}, RequestOptions{}), beast_client::InvalidUrl);
    }
    EXPECT_EQ(server.accepts(), 0);
    EXPECT_THROW(beast_client::validate_headers({{"X-A", "1\r\nX: 1"}}), std::invalid_argument);
    EXPECT_THROW(beast_client::validate_headers({{"X-A\n", "1"}}), std::invalid_argument);
    EXPECT_NO_THROW(beast_client::validate_headers({{"X-A", "1\t2"}}));
}

// ---- cookies and the body limit ----------------------------------------------------------------------

TEST(Send, CookiesAreStoredAndSentAtEveryHop) {
    TestServer server(route([](const std::string& req) {
        const std::string p = path_of(req);
        if (p == "/login") return response("302 Found\r\nSet-Cookie: s=1; Path=/\r\nLocation: /home", "");
        const auto at = req.find("\r\nCookie: ");
        const std::string cookie =
            at == std::string::npos ? "" : req.substr(at + 10, req.find("\r\n", at + 2) - at - 10);
        return response("200 OK", cookie);
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    o.cookies = std::make_shared<beast_client::CookieJar>();
    EXPECT_EQ(c.send("GET", server.url("/login"), {}, {}, o).body, "s=1");  // the redirect's cookie, next hop
    EXPECT_EQ(c.send("GET", server.url("/again"), {}, {}, o).body, "s=1");
    EXPECT_EQ(c.send("GET", server.url("/again"), {{"Cookie", "mine=1"}}, {}, o).body, "mine=1");  // replaces
    EXPECT_EQ(c.send("GET", server.url("/again"), {}, {}, RequestOptions{}).body, "");             // no jar
    EXPECT_EQ(c.get(server.url("/login")), 302);  // the benchmark path neither sends nor stores
    EXPECT_EQ(o.cookies->size(), 1u);
}

TEST(Send, MaxBodySizeBoundsTheBodyKept) {
    const std::string big = text(100000);
    TestServer server(route([&](const std::string& req) {
        const std::string p = path_of(req);
        if (p == "/gzip") return response("200 OK\r\nContent-Encoding: gzip", gzip(big));
        if (p == "/chunked")
            return std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") + "2710\r\n" +
                   big.substr(0, 10000) + "\r\n0\r\n\r\n";
        return response("200 OK", big);
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    RequestOptions o;
    o.max_body_size = big.size();
    EXPECT_EQ(c.send("GET", server.url("/plain"), {}, {}, o).body, big);  // exactly the limit
    EXPECT_EQ(c.send("GET", server.url("/gzip"), {}, {}, o).body, big);
    o.max_body_size = big.size() - 1;
    for (const char* path : {"/plain", "/gzip"})
        EXPECT_THROW(c.send("GET", server.url(path), {}, {}, o), beast_client::BodyTooLarge) << path;
    o.max_body_size = 9999;
    EXPECT_THROW(c.send("GET", server.url("/chunked"), {}, {}, o), beast_client::BodyTooLarge);
    o.decompress = false;  // the body as received: under the limit
    o.max_body_size = big.size() / 2;
    EXPECT_EQ(c.send("GET", server.url("/gzip"), {}, {}, o).status, 200);
    // stream() is not limited by it
    o.max_body_size = 10;
    auto s = c.stream("GET", server.url("/plain"), {}, {}, o);
    std::string all, chunk;
    while (s->next(chunk)) all += chunk;
    EXPECT_EQ(all, big);
}

// ---- decompression ----------------------------------------------------------------------------------

TEST(Send, DecodesGzipAndDeflate) {
    const std::string body = text(300000);
    TestServer server(route([&](const std::string& req) {
        const std::string p = path_of(req);
        if (p == "/gzip") return response("200 OK\r\nContent-Encoding: gzip", gzip(body));
        if (p == "/zlib") return response("200 OK\r\nContent-Encoding: deflate", zlib_wrap(body));
        if (p == "/raw") return response("200 OK\r\nContent-Encoding: Deflate", raw_deflate(body));
        if (p == "/bad") {
            std::string g = gzip(body);
            g[g.size() - 6] ^= 0x55;  // the CRC
            return response("200 OK\r\nContent-Encoding: gzip", g);
        }
        if (p == "/cut") return response("200 OK\r\nContent-Encoding: gzip", gzip(body).substr(0, 1000));
        return response("200 OK\r\nContent-Encoding: compress", "not decoded");  // a coding it does not know
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    for (const char* p : {"/gzip", "/zlib", "/raw"}) {
        const auto r = c.send("GET", server.url(p), {}, {}, RequestOptions{});
        EXPECT_EQ(r.body.size(), body.size()) << p;
        EXPECT_TRUE(r.body == body) << p;
    }
    EXPECT_TRUE(has_line(server.requests()[0], "Accept-Encoding: gzip, deflate, br, zstd"));  // test_codings.cpp
    EXPECT_EQ(c.send("GET", server.url("/compress"), {}, {}, RequestOptions{}).body, "not decoded");
    EXPECT_THROW(c.send("GET", server.url("/bad"), {}, {}, RequestOptions{}), beast_client::ProtocolError);
    EXPECT_THROW(c.send("GET", server.url("/cut"), {}, {}, RequestOptions{}), beast_client::ProtocolError);

    RequestOptions raw;
    raw.decompress = false;
    const auto r = c.send("GET", server.url("/gzip"), {}, {}, raw);
    EXPECT_TRUE(r.body == gzip(body));
    EXPECT_EQ(server.requests().back().find("Accept-Encoding"), std::string::npos);
    // get() (the benchmark's path) sends no Accept-Encoding
    EXPECT_EQ(c.get(server.url("/gzip")), 200);
    EXPECT_EQ(c.last_body_bytes(), gzip(body).size());
    EXPECT_EQ(server.requests().back().find("Accept-Encoding"), std::string::npos);
}

// ---- the request ----------------------------------------------------------------------------------

TEST(Send, EncodesTheUrlAndSetsTheUserAgent) {
    TestServer server(answer_all(response("200 OK", "")));
    Client c(Timeouts{5s, {}, {}}, {});
    c.send("GET", server.url("/a b/\xc3\xa9?q=x y&p=%41"), {}, {}, RequestOptions{});
    RequestOptions o;
    o.user_agent = "mine/1";
    c.send("GET", server.url("/"), {}, {}, o);
    c.send("GET", server.url("/"), {{"user-agent", "theirs/2"}}, {}, o);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 3u);
    EXPECT_EQ(reqs[0].rfind("GET /a%20b/%C3%A9?q=x%20y&p=%41 HTTP/1.1\r\n", 0), 0u) << reqs[0];
    EXPECT_TRUE(has_line(reqs[0], std::string("User-Agent: beast-client/") + beast_client::version)) << reqs[0];
    EXPECT_TRUE(has_line(reqs[1], "User-Agent: mine/1"));
    EXPECT_TRUE(has_line(reqs[2], "user-agent: theirs/2"));
    EXPECT_EQ(reqs[2].find("mine/1"), std::string::npos);
}

TEST(Send, KeepsRepeatedHeadersApartInOrder) {
    TestServer server(answer_all(
        "HTTP/1.1 200 Fine\r\nSet-Cookie: a=1; Path=/\r\nX-A: 1\r\nset-cookie: b=2, c\r\nContent-Length: 0\r\n\r\n"));
    Client c(Timeouts{5s, {}, {}}, {});
    const auto r = c.send("GET", server.url("/"), {}, {}, RequestOptions{});
    EXPECT_EQ(r.reason, "Fine");
    ASSERT_EQ(r.headers.size(), 4u);
    EXPECT_EQ(r.headers[0], (std::pair<std::string, std::string>{"Set-Cookie", "a=1; Path=/"}));
    EXPECT_EQ(r.headers[2], (std::pair<std::string, std::string>{"set-cookie", "b=2, c"}));
}

// ---- timeouts -------------------------------------------------------------------------------------

TEST(Timeouts, ReadTimeoutWhenTheServerNeverAnswers) {
    TestServer server([](Conn& c) {
        c.read_request();
        c.wait_closed();
    });
    Client c(Timeouts{std::nullopt, 5s, 200ms}, {});
    try {
        c.send("GET", server.url("/"), {}, {}, RequestOptions{});
        FAIL() << "no exception";
    } catch (const beast_client::TimeoutError& e) {
        EXPECT_NE(std::string(e.what()).find("read timeout"), std::string::npos) << e.what();
    }
    EXPECT_THROW(c.get(server.url("/")), beast_client::TimeoutError);  // get() has the read timeout too
}

TEST(Timeouts, SlowButSteadyBodyIsNotAReadTimeout) {
    TestServer server([](Conn& c) {
        c.read_request();
        c.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n");
        for (int i = 0; i < 10; ++i) {
            std::this_thread::sleep_for(60ms);
            if (!c.write("x")) return;
        }
        c.wait_closed();
    });
    // each gap (60 ms) is below the read timeout, the whole body takes longer than it
    Client c(Timeouts{std::nullopt, 5s, 400ms}, {});
    const auto r = c.send("GET", server.url("/"), {}, {}, RequestOptions{});
    EXPECT_EQ(r.body, "xxxxxxxxxx");
}

TEST(Timeouts, TotalTimeoutPerRequestOverridesTheClient) {
    TestServer server([](Conn& c) {
        c.read_request();
        c.wait_closed();
    });
    Client c(Timeouts{}, {});
    RequestOptions o;
    o.timeout = 200ms;
    try {
        c.send("GET", server.url("/"), {}, {}, o);
        FAIL() << "no exception";
    } catch (const beast_client::TimeoutError& e) {
        EXPECT_NE(std::string(e.what()).find("timed out after 0.2 s"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Client(Timeouts{std::nullopt, 0s, std::nullopt}, {}), std::invalid_argument);
}

TEST(Timeouts, ConnectTimeoutWhenTheListenerNeverAccepts) {
    // a listener with a full backlog that never accepts: the kernel drops further SYNs
    net::io_context ioc;
    tcp::acceptor acceptor(ioc);
    const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
    acceptor.open(ep.protocol());
    acceptor.bind(ep);
    acceptor.listen(0);
    const auto port = acceptor.local_endpoint().port();
    // non-blocking connects (POSIX: Asio's connect() waits for the handshake even on a non-blocking socket)
    std::vector<int> fds;
    struct Close {
        std::vector<int>& fds;
        ~Close() {
            for (int fd : fds) ::close(fd);
        }
    } close_all{fds};
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const auto start_connect = [&] {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        fds.push_back(fd);
        ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
        return fd;
    };
    for (int i = 0; i < 8; ++i) start_connect();  // fill the backlog
    {  // does this kernel leave a connect to it pending (no SYN cookies completing it)?
        pollfd p{start_connect(), POLLOUT, 0};
        if (::poll(&p, 1, 300) > 0)
            GTEST_SKIP() << "this kernel completes connections to a listener with a full backlog";
    }
    // a total timeout too, so that the test ends whatever happens
    Client c(Timeouts{5s, 300ms, std::nullopt}, {});
    try {
        c.send("GET", "http://127.0.0.1:" + std::to_string(port) + "/", {}, {}, RequestOptions{});
        FAIL() << "no exception";
    } catch (const beast_client::TimeoutError& e) {
        EXPECT_NE(std::string(e.what()).find("connect timeout"), std::string::npos) << e.what();
    }
}

// ---- the pool -------------------------------------------------------------------------------------

TEST(Pool, OneConnectionPerHostWhenAlternating) {
    TestServer server(answer_all(kHello));
    Client c(2s);
    const std::string port = std::to_string(server.port());
    for (int i = 0; i < 10; ++i) {
        const std::string host = i % 2 ? "localhost" : "127.0.0.1";
        EXPECT_EQ(c.get("http://" + host + ":" + port + "/"), 200);
    }
    EXPECT_EQ(c.connections_opened(), 2u);
    EXPECT_EQ(server.accepts(), 2);
    EXPECT_TRUE(c.connected());
    c.close();
    EXPECT_FALSE(c.connected());
}

TEST(Pool, TheLeastRecentlyUsedHostIsClosedBeyondThePoolSize) {
    std::vector<std::unique_ptr<TestServer>> servers;
    for (std::size_t i = 0; i <= Client::pool_size; ++i)
        servers.push_back(std::make_unique<TestServer>(answer_all(kHello)));
    Client c(2s);
    for (auto& s : servers) EXPECT_EQ(c.get(s->url()), 200);
    EXPECT_EQ(c.get(servers.back()->url()), 200);  // still pooled
    EXPECT_EQ(c.connections_opened(), Client::pool_size + 1);
    EXPECT_EQ(c.get(servers.front()->url()), 200);  // was evicted
    EXPECT_EQ(c.connections_opened(), Client::pool_size + 2);
}

// ---- streaming ------------------------------------------------------------------------------------

TEST(Stream, ReadsAMebibyteInSeveralChunksAndReusesTheConnection) {
    const std::string body = text(1 << 20);
    TestServer server(route([&](const std::string& req) {
        if (path_of(req) == "/gzip") return response("200 OK\r\nContent-Encoding: gzip", gzip(body));
        return response("200 OK", body);
    }));
    Client c(Timeouts{5s, {}, {}}, {});
    for (const char* path : {"/plain", "/gzip"}) {
        auto s = c.stream("GET", server.url(path), {}, {}, RequestOptions{});
        EXPECT_EQ(s->status(), 200);
        std::string chunk, all;
        int chunks = 0;
        while (s->next(chunk)) {
            EXPECT_FALSE(chunk.empty());
            all += chunk;
            ++chunks;
        }
        EXPECT_GT(chunks, 1) << path;
        EXPECT_TRUE(all == body) << path;
        EXPECT_TRUE(s->done());
        EXPECT_FALSE(s->next(chunk));
    }
    EXPECT_EQ(c.get(server.url("/plain")), 200);
    EXPECT_EQ(c.connections_opened(), 1u);
}

TEST(Stream, ClosedBeforeTheEndDropsTheConnection) {
    const std::string body = text(1 << 20);
    TestServer server(answer_all(response("200 OK", body)));
    Client c(Timeouts{5s, {}, {}}, {});
    {
        auto s = c.stream("GET", server.url(), {}, {}, RequestOptions{});
        std::string chunk;
        ASSERT_TRUE(s->next(chunk));
        EXPECT_LT(chunk.size(), body.size());
    }
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(c.connections_opened(), 2u);
}
