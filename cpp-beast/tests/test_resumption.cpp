// TLS session resumption: a client's later connections to a server resume the session of an earlier one (TLS 1.2:
// the session; TLS 1.3: a ticket, used once), as the in-test server counts them (SSL_session_reused); two clients
// never share a session; the Client and the AsyncClient alike.
#include "async_support.hpp"
#include "beast_client/async_client.hpp"
#include "beast_client/client.hpp"
#include "tls_pki.hpp"
#include "tls_server.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <string>

using beast_client::AsyncClient;
using beast_client::Client;
using beast_client::IoThread;
using beast_client::Timeouts;
using namespace tls_test;

namespace {

// Every answer closes its connection: each request is a new connection, a new handshake.
const std::string kClose = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

ServerOptions version(int v) {
    ServerOptions o = tls_with(pki().server);
    o.min_version = o.max_version = v;
    return o;
}

}  // namespace

TEST(Resumption, EveryLaterConnectionResumes) {
    for (const int v : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        TlsServer server(version(v), answer_all(kClose));
        Client c(5s, trust_test_ca());
        for (int i = 0; i < 4; ++i) EXPECT_EQ(c.get(server.url()), 200) << v;
        EXPECT_EQ(server.handshakes(), 4) << v;
        EXPECT_EQ(server.resumed(), 3) << v;  // all but the first
        EXPECT_EQ(c.tls_info()->version, v == TLS1_2_VERSION ? "TLSv1.2" : "TLSv1.3");
        Client other(5s, trust_test_ca());
        EXPECT_EQ(other.get(server.url()), 200) << v;
        EXPECT_EQ(server.resumed(), 3) << v;  // another client: its own sessions only
    }
}

TEST(Resumption, SessionsArePerOrigin) {
    TlsServer a(version(TLS1_3_VERSION), answer_all(kClose));
    TlsServer b(version(TLS1_3_VERSION), answer_all(kClose));
    Client c(5s, trust_test_ca());
    EXPECT_EQ(c.get(a.url()), 200);
    EXPECT_EQ(c.get(b.url()), 200);                  // a's ticket is not offered to b
    EXPECT_EQ(c.get(a.url("/", "localhost")), 200);  // nor to another name of a
    EXPECT_EQ(a.resumed() + b.resumed(), 0);
    EXPECT_EQ(c.get(b.url()), 200);
    EXPECT_EQ(b.resumed(), 1);
}

TEST(Resumption, TheAsyncClientResumesToo) {
    for (const int v : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        TlsServer server(version(v), answer_all(kClose));
        IoThread io;
        AsyncClient c(io, Timeouts{5s, {}, {}}, trust_test_ca());
        for (int i = 0; i < 3; ++i) EXPECT_EQ(test_support::get(c, server.url()).status, 200) << v;
        EXPECT_EQ(server.handshakes(), 3) << v;
        EXPECT_EQ(server.resumed(), 2) << v;
    }
}
