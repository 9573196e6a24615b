// Proxies (beast_client/proxy.hpp) against the in-test proxy (proxy_server.hpp): http:// in absolute form with
// the proxy's credentials, https:// through a CONNECT tunnel (the TLS handshake the server's), a refused tunnel,
// NO_PROXY, the environment, proxy URLs the client cannot use; the Client and the AsyncClient alike.
#include "beast_client/async_client.hpp"
#include "beast_client/client.hpp"
#include "proxy.hpp"
#include "proxy_server.hpp"
#include "test_server.hpp"
#include "tls_server.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <future>
#include <string>

using namespace std::chrono_literals;
using beast_client::AsyncClient;
using beast_client::Client;
using beast_client::IoThread;
using beast_client::ProxyConfig;
using beast_client::Timeouts;
using test_support::TestProxy;
using test_support::TestServer;

namespace {

const std::string kAuth = "Basic dXNlcjpwIHc=";  // user:p w (the password percent-encoded in the URL)

std::string with_credentials(const TestProxy& p) { return "http://user:p%20w@127.0.0.1:" + std::to_string(p.port()); }

bool has_line(const std::string& head, const std::string& line) {
    return head.find("\r\n" + line + "\r\n") != std::string::npos;
}

// Sets environment variables for a test, and unsets every proxy variable before and after.
struct Environment {
    Environment() { clear(); }
    ~Environment() { clear(); }
    static void clear() {
        for (const char* v : {"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy",
                              "NO_PROXY", "no_proxy", "REQUEST_METHOD"})
            ::unsetenv(v);
    }
};

}  // namespace

TEST(Proxy, HttpGoesInAbsoluteFormWithTheProxysCredentials) {
    TestProxy proxy(kAuth);
    Client c(Timeouts{5s, {}, {}}, {}, 50ms, 0, ProxyConfig::all(with_credentials(proxy)));
    // the target's name is never resolved here: the proxy's is
    const auto r = c.request("GET", "http://upstream.invalid:8081/path?q=1");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "GET http://upstream.invalid:8081/path?q=1 HTTP/1.1");
    EXPECT_EQ(c.get("http://upstream.invalid:8081/again"), 200);
    EXPECT_EQ(proxy.accepts(), 1);                      // kept alive, as any connection (one per origin)
    EXPECT_EQ(c.get("http://upstream.invalid/"), 200);  // the default port is left out
    const auto heads = proxy.heads();
    ASSERT_EQ(heads.size(), 3u);
    EXPECT_TRUE(has_line(heads[0], "Host: upstream.invalid:8081")) << heads[0];
    EXPECT_TRUE(has_line(heads[0], "Proxy-Authorization: " + kAuth)) << heads[0];
    EXPECT_EQ(heads[2].rfind("GET http://upstream.invalid/ HTTP/1.1\r\n", 0), 0u) << heads[2];
    Client anonymous(Timeouts{5s, {}, {}}, {}, 50ms, 0, ProxyConfig::all(proxy.url()));
    EXPECT_EQ(anonymous.get("http://upstream.invalid/"), 407);  // the proxy's answer, returned as any
}

TEST(Proxy, HttpsGoesThroughATunnel) {
    using namespace tls_test;
    TlsServer server(tls_with(pki().server), answer_all(kHello));
    TestProxy proxy(kAuth);
    Client c(Timeouts{5s, {}, {}}, trust_test_ca(), 50ms, 0, ProxyConfig::all(with_credentials(proxy)));
    EXPECT_EQ(c.get(server.url("/x", "localhost")), 200);  // verified for localhost, through the tunnel
    EXPECT_EQ(c.get(server.url("/y", "localhost")), 200);
    EXPECT_EQ(proxy.accepts(), 1);
    const auto heads = proxy.heads();
    ASSERT_EQ(heads.size(), 1u);
    const std::string authority = "localhost:" + std::to_string(server.port());
    EXPECT_EQ(heads[0], "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority +
                            "\r\nProxy-Authorization: " + kAuth + "\r\n\r\n");
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_EQ(reqs[0].rfind("GET /x HTTP/1.1\r\n", 0), 0u) << reqs[0];             // origin form inside the tunnel
    EXPECT_EQ(reqs[0].find("Proxy-Authorization"), std::string::npos) << reqs[0];  // the proxy's alone
    EXPECT_EQ(server.server_names(), std::vector<std::string>{"localhost"});
}

TEST(Proxy, ARefusedTunnelOrAnUnreachableProxyIsAConnectionError) {
    using namespace tls_test;
    TlsServer server(tls_with(pki().server), answer_all(kHello));
    TestProxy proxy(kAuth);
    Client c(Timeouts{5s, {}, {}}, trust_test_ca(), 50ms, 0, ProxyConfig::all(proxy.url()));
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::TLSError& e) {
        FAIL() << "a TLSError: " << e.what();
    } catch (const beast_client::ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("refused the tunnel"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("407"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(server.requests().empty());
    const std::string nobody = "http://127.0.0.1:" + std::to_string(test_support::unused_port());
    Client unreachable(Timeouts{5s, {}, {}}, {}, 50ms, 0, ProxyConfig::all(nobody));
    try {
        unreachable.get("http://upstream.invalid/");
        FAIL() << "no error";
    } catch (const beast_client::ConnectionError& e) {
        EXPECT_EQ(e.kind(), beast_client::ConnectionError::Kind::refused) << e.what();
        EXPECT_NE(std::string(e.what()).find("proxy 127.0.0.1:"), std::string::npos) << e.what();
    }
}

TEST(Proxy, NoProxyGoesDirect) {
    TestServer server(test_support::answer_all(test_support::kHello));
    TestProxy proxy;
    ProxyConfig config = ProxyConfig::all(proxy.url());
    config.no_proxy = "example.org, 127.0.0.0/8";
    Client c(Timeouts{5s, {}, {}}, {}, 50ms, 0, config);
    EXPECT_EQ(c.request("GET", server.url()).body, "hello");
    EXPECT_EQ(c.request("GET", "http://www.example.org.invalid/").status, 200);  // not a subdomain: the proxy
    EXPECT_EQ(server.accepts(), 1);
    EXPECT_EQ(proxy.heads().size(), 1u);
}

TEST(Proxy, NoProxyRules) {
    using beast_client::detail::NoProxy;
    const NoProxy none;
    EXPECT_FALSE(none.matches("example.org"));
    const NoProxy rules(" Example.ORG ,.sub.test,10.0.0.0/8, ::1 ,192.168.1.7,bad/99, ");
    for (const char* host :
         {"example.org", "www.example.org", "a.sub.test", "sub.test", "10.1.2.3", "::1", "192.168.1.7"})
        EXPECT_TRUE(rules.matches(host)) << host;
    for (const char* host : {"notexample.org", "example.org.evil", "test", "11.0.0.1", "::2", "192.168.1.8", "bad"})
        EXPECT_FALSE(rules.matches(host)) << host;
    EXPECT_TRUE(NoProxy("*").matches("anything.at.all"));
    EXPECT_TRUE(NoProxy("fd00::/8").matches("fd12::1"));
    EXPECT_TRUE(NoProxy("0.0.0.0/0").matches("8.8.8.8"));
}

TEST(Proxy, TheEnvironmentAsReqwestReadsIt) {
    Environment env;
    EXPECT_TRUE(ProxyConfig::from_environment().empty());
    ::setenv("http_proxy", "http://lower:1", 1);
    ::setenv("HTTP_PROXY", "http://upper:1", 1);
    ::setenv("all_proxy", "all:2", 1);
    ::setenv("no_proxy", "localhost", 1);
    auto c = ProxyConfig::from_environment();
    EXPECT_EQ(c.http, "http://upper:1");  // the upper-case name first
    EXPECT_EQ(c.https, "all:2");          // ALL_PROXY for what has none
    EXPECT_EQ(c.no_proxy, "localhost");
    ::setenv("REQUEST_METHOD", "GET", 1);  // a CGI script: HTTP_PROXY may be a request's Proxy header
    EXPECT_TRUE(ProxyConfig::from_environment().empty());
}

TEST(Proxy, AProxyUrlTheClientCannotUseIsAnInvalidUrl) {
    for (const char* bad : {"https://p:3128", "socks5://p:1080", "http://p:3128/path", "http://", "http://p:99999"}) {
        EXPECT_THROW(Client(Timeouts{5s, {}, {}}, {}, 50ms, 0, ProxyConfig::all(bad)), beast_client::InvalidUrl) << bad;
    }
    try {
        Client(Timeouts{5s, {}, {}}, {}, 50ms, 0, ProxyConfig::all("https://user:secret@p:1"));
        FAIL() << "no error";
    } catch (const beast_client::InvalidUrl& e) {
        EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();  // never in a message
    }
    // no scheme: http://; no port: 80
    const auto p = beast_client::detail::parse_proxy_url("proxy.example:3128");
    EXPECT_EQ(p.where, "proxy.example:3128");
    EXPECT_EQ(beast_client::detail::parse_proxy_url("http://u@h/").authorization, "Basic dTo=");  // "u:"
}

TEST(Proxy, TheAsyncClientGoesThroughItToo) {
    using namespace tls_test;
    TlsServer server(tls_with(pki().server), answer_all(kHello));
    TestProxy proxy(kAuth);
    IoThread io;
    AsyncClient c(io, Timeouts{5s, {}, {}}, trust_test_ca(), 0, ProxyConfig::all(with_credentials(proxy)));
    const auto get = [&](const std::string& url) {
        auto done = std::make_shared<std::promise<beast_client::FetchResult>>();
        auto result = done->get_future();
        c.get(url, [done](beast_client::FetchResult r, std::exception_ptr e) {
            if (e)
                done->set_exception(e);
            else
                done->set_value(r);
        });
        EXPECT_EQ(result.wait_for(10s), std::future_status::ready);
        return result.get();
    };
    EXPECT_EQ(get(server.url("/a", "localhost")).status, 200);
    EXPECT_EQ(get("http://upstream.invalid/b").body_bytes,
              std::string("GET http://upstream.invalid/b HTTP/1.1").size());
    const auto heads = proxy.heads();
    ASSERT_EQ(heads.size(), 2u);
    EXPECT_EQ(heads[0].rfind("CONNECT localhost:", 0), 0u) << heads[0];
    EXPECT_TRUE(has_line(heads[1], "Proxy-Authorization: " + kAuth)) << heads[1];
}
