// HTTPS: the client against the in-test TLS server (tls_server.hpp) with the test PKI (tls_pki.hpp):
// success, keep-alive and protocol versions; certificate verification. test_tls_faults.cpp: the wrong
// protocol, timeouts, cancellation, idle connections and closes.
#include "beast_client/client.hpp"
#include "tls_pki.hpp"
#include "tls_server.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

using beast_client::Client;
using beast_client::TlsConfig;
using namespace tls_test;

// ---- success, keep-alive, protocol versions ----------------------------------------------------------

TEST(Tls, GetWithTheCaBundle) {
    TlsServer server(tls_with(pki().server), answer_all(kHello));
    Client c(5s, trust_test_ca());
    EXPECT_FALSE(c.tls_info());
    EXPECT_EQ(c.get(server.url("/x")), 200);
    EXPECT_EQ(c.last_body_bytes(), 5u);
    const auto info = c.tls_info();
    ASSERT_TRUE(info);
    EXPECT_EQ(info->version, "TLSv1.3");
    EXPECT_EQ(info->cipher.rfind("TLS_", 0), 0u) << info->cipher;
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 1u);
    EXPECT_EQ(reqs[0].rfind("GET /x HTTP/1.1\r\n", 0), 0u) << reqs[0];
    EXPECT_NE(reqs[0].find("Host: 127.0.0.1:" + std::to_string(server.port()) + "\r\n"), std::string::npos);
}

TEST(Tls, KeepAliveReusesOneTlsConnection) {
    TlsServer server(tls_with(pki().server), answer_all(kHello));
    Client c(5s, trust_test_ca());
    for (int i = 0; i < 5; ++i) EXPECT_EQ(c.get(server.url()), 200);
    const auto r = c.request("POST", server.url("/echo"), {{"Content-Type", "text/plain"}}, "payload");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "hello");
    EXPECT_EQ(server.accepts(), 1);
    EXPECT_EQ(server.handshakes(), 1);
    EXPECT_EQ(c.connections_opened(), 1u);
    EXPECT_TRUE(c.connected());
    EXPECT_EQ(server.requests().size(), 6u);
}

TEST(Tls, LargeBodyAndChunkedBody) {
    const std::string body(8 * 1024 * 1024 + 123, 'x');
    TlsServer server(tls_with(pki().server), [&body](Conn& c) {
        std::string req;
        while (c.read_request(&req)) {
            if (req.rfind("GET /chunked ", 0) == 0)
                c.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
            else
                c.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
        }
    });
    Client c(10s, trust_test_ca());
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(c.last_body_bytes(), body.size());
    EXPECT_EQ(c.request("GET", server.url()).body.size(), body.size());
    EXPECT_EQ(c.request("GET", server.url("/chunked")).body, "hello world");
    EXPECT_EQ(server.handshakes(), 1);
}

TEST(Tls, Tls12AndTls13) {
    ServerOptions v12 = tls_with(pki().server);
    v12.max_version = TLS1_2_VERSION;
    ServerOptions v13 = tls_with(pki().server);
    v13.min_version = TLS1_3_VERSION;
    TlsServer a(v12, answer_all(kHello));
    TlsServer b(v13, answer_all(kHello));
    Client c(5s, trust_test_ca());
    EXPECT_EQ(c.get(a.url()), 200);
    EXPECT_EQ(c.get(a.url()), 200);
    ASSERT_TRUE(c.tls_info());
    EXPECT_EQ(c.tls_info()->version, "TLSv1.2");
    EXPECT_NE(c.tls_info()->cipher.find("ECDHE-ECDSA"), std::string::npos) << c.tls_info()->cipher;
    EXPECT_EQ(a.handshakes(), 1);  // keep-alive over TLS 1.2 too
    EXPECT_EQ(c.get(b.url()), 200);
    EXPECT_EQ(c.tls_info()->version, "TLSv1.3");
}

TEST(Tls, OlderThanTls12IsAHandshakeFailure) {
    ServerOptions old = tls_with(pki().server);
    old.max_version = TLS1_1_VERSION;
    TlsServer server(old, answer_all(kHello));
    Client c(5s, trust_test_ca());
    expect_tls_error([&] { c.get(server.url()); }, "TLS handshake with 127.0.0.1:" + std::to_string(server.port()));
    EXPECT_FALSE(c.connected());
    EXPECT_TRUE(server.requests().empty());
}

TEST(Tls, SniForHostNamesNotForIpAddresses) {
    TlsServer server(tls_with(pki().server), answer_all(kHello));
    Client c(5s, trust_test_ca());
    EXPECT_EQ(c.get(server.url("/", "localhost")), 200);  // verified against DNS:localhost
    EXPECT_EQ(c.get(server.url("/", "127.0.0.1")), 200);  // against IP:127.0.0.1 (a new connection)
    EXPECT_EQ(server.server_names(), (std::vector<std::string>{"localhost", ""}));
    EXPECT_EQ(server.handshakes(), 2);
    const auto reqs = server.requests();
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_NE(reqs[0].find("Host: localhost:" + std::to_string(server.port()) + "\r\n"), std::string::npos);
}

TEST(Tls, SwitchingBetweenHttpAndHttps) {
    TlsServer tls(tls_with(pki().server), answer_all(kHello));
    TlsServer plain(ServerOptions{}, answer_all(kHello));
    Client c(5s, trust_test_ca());
    EXPECT_EQ(c.get(plain.url("/", "127.0.0.1", "http")), 200);
    EXPECT_FALSE(c.tls_info());
    EXPECT_EQ(c.get(tls.url()), 200);
    EXPECT_TRUE(c.tls_info());
    EXPECT_EQ(c.get(plain.url("/", "127.0.0.1", "http")), 200);
    EXPECT_TRUE(c.tls_info());  // the most recently opened connection's: both were kept in the pool
    EXPECT_EQ(c.get(tls.url()), 200);
    EXPECT_EQ(c.connections_opened(), 2u);
}

// ---- certificate verification -----------------------------------------------------------------------

TEST(Tls, UntrustedCertificateIsATlsError) {
    TlsServer server(tls_with(pki().untrusted), answer_all(kHello));  // from another CA
    Client c(5s, trust_test_ca());
    expect_tls_error([&] { c.get(server.url()); }, "certificate verify failed: unable to get local issuer certificate");
    Client system_roots(5s);  // the system's store does not know the test CA either
    expect_tls_error([&] { system_roots.get(server.url()); }, "certificate verify failed");
    EXPECT_TRUE(server.requests().empty());
}

TEST(Tls, SelfSignedCertificateIsATlsError) {
    TlsServer server(tls_with(pki().self_signed), answer_all(kHello));
    Client c(5s, trust_test_ca());
    const auto what = expect_tls_error([&] { c.get(server.url()); }, "certificate verify failed: self");
    EXPECT_NE(what.find("self-signed certificate"), std::string::npos) << what;  // OpenSSL 3's wording
}

TEST(Tls, WrongHostNameIsATlsError) {
    TlsServer server(tls_with(pki().wrong_name), answer_all(kHello));
    Client c(5s, trust_test_ca());
    expect_tls_error([&] { c.get(server.url("/", "localhost")); }, "certificate verify failed: hostname mismatch");
    TlsServer dns_only(tls_with(pki().dns_only), answer_all(kHello));  // IP addresses are checked as such
    expect_tls_error([&] { c.get(dns_only.url("/", "127.0.0.1")); }, "certificate verify failed: IP address mismatch");
    EXPECT_EQ(c.get(dns_only.url("/", "localhost")), 200);
    EXPECT_TRUE(server.requests().empty());
}

TEST(Tls, ExpiredCertificateIsATlsError) {
    TlsServer server(tls_with(pki().expired), answer_all(kHello));
    Client c(5s, trust_test_ca());
    expect_tls_error([&] { c.get(server.url()); }, "certificate verify failed: certificate has expired");
}

TEST(Tls, TlsErrorIsAConnectionError) {
    TlsServer server(tls_with(pki().expired), answer_all(kHello));
    Client c(5s, trust_test_ca());
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::ConnectionError& e) {  // TLSError derives from it
        EXPECT_STREQ(e.type_name(), "TLSError");
        EXPECT_NE(dynamic_cast<const beast_client::TLSError*>(&e), nullptr);
    }
}

TEST(Tls, NoVerificationAcceptsAnyCertificate) {
    TlsServer self_signed(tls_with(pki().self_signed), answer_all(kHello));
    TlsServer expired(tls_with(pki().expired), answer_all(kHello));
    TlsServer wrong_name(tls_with(pki().wrong_name), answer_all(kHello));
    Client c(5s, TlsConfig{false, {}});
    EXPECT_EQ(c.get(self_signed.url()), 200);
    EXPECT_EQ(c.get(expired.url()), 200);
    EXPECT_EQ(c.get(wrong_name.url("/", "localhost")), 200);
    EXPECT_EQ(c.get(wrong_name.url("/", "localhost")), 200);
    EXPECT_EQ(wrong_name.handshakes(), 1);
}

TEST(Tls, CaFileErrorsAtConstruction) {
    try {
        Client c(1s, TlsConfig{true, (pki().dir / "missing.pem").string()});
        FAIL() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
        EXPECT_NE(std::string(e.what()).find("missing.pem"), std::string::npos) << e.what();
    }
    const auto garbage = (pki().dir / "garbage.pem").string();
    std::ofstream(garbage) << "this is not a certificate\n";
    try {
        Client c(1s, TlsConfig{true, garbage});
        FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("holds no usable PEM certificate"), std::string::npos) << e.what();
    }
    // not loaded at all when nothing is verified
    EXPECT_NO_THROW(Client(1s, TlsConfig{false, garbage}));
}

TEST(Tls, CaDirectoryOfHashedCertificates) {
    const auto dir = pki().dir / "hashed";
    std::filesystem::create_directories(dir);
    char name[32];
    std::snprintf(name, sizeof name, "%08lx.0", X509_NAME_hash(X509_get_subject_name(pki().ca.cert.get())));
    std::ofstream(dir / name) << pem(pki().ca.cert.get());
    TlsServer server(tls_with(pki().server), answer_all(kHello));
    Client c(5s, TlsConfig{true, dir.string()});
    EXPECT_EQ(c.get(server.url()), 200);
}
