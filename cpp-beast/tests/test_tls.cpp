// HTTPS: the client against an in-test TLS server on 127.0.0.1. The certificates (a test CA, server
// certificates for localhost / 127.0.0.1, an expired one, one for another name, a self-signed one, one from
// another CA) are generated when the tests start, with OpenSSL's C API (EC P-256 keys); the only file written
// is the CA's certificate (a PEM bundle for TlsConfig::ca_file) in a temporary directory, removed at exit.
// The server accepts with Boost.Asio, is configured through a boost::asio::ssl::context, and speaks TLS with
// OpenSSL directly on the blocking socket (so that a test can send a close_notify without waiting for the
// client's). Every test is bounded in time: client timeouts are short and the server shuts its sockets down
// when it is destroyed.
#include "beast_client/client.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using beast_client::Client;
using beast_client::TlsConfig;
using Clock = std::chrono::steady_clock;

namespace {

// ---- test PKI -------------------------------------------------------------------------------------------

struct KeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
    void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

[[noreturn]] void openssl_fail(const char* what) {
    char buf[256];
    ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
    throw std::runtime_error(std::string(what) + ": " + buf);
}

Key make_key() {
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nullptr),
                                                                    EVP_PKEY_CTX_free);
    EVP_PKEY* key = nullptr;
    if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
        EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx.get(), NID_X9_62_prime256v1) != 1 ||
        EVP_PKEY_keygen(ctx.get(), &key) != 1)
        openssl_fail("EC key generation");
    return Key(key);
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (!ext || X509_add_ext(cert, ext, -1) != 1) openssl_fail("certificate extension");
    X509_EXTENSION_free(ext);
}

struct Identity {
    Cert cert;
    Key key;
};

// A certificate for `key`, signed by `issuer` (self-signed when issuer is null). `sans`: the
// subjectAltName ("DNS:localhost,IP:127.0.0.1"), empty for a CA. Valid from now+from_s to now+to_s.
Cert make_cert(EVP_PKEY* key, const std::string& cn, const Identity* issuer, bool ca, const std::string& sans,
               long from_s = -3600, long to_s = 86400) {
    static std::atomic<long> serial{1000};
    Cert cert(X509_new());
    X509* c = cert.get();
    X509_set_version(c, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(c), serial++);
    X509_gmtime_adj(X509_getm_notBefore(c), from_s);
    X509_gmtime_adj(X509_getm_notAfter(c), to_s);
    X509_NAME* name = X509_get_subject_name(c);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer->cert.get()) : name);
    X509_set_pubkey(c, key);
    X509* issuer_cert = issuer ? issuer->cert.get() : c;
    add_ext(c, issuer_cert, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
    add_ext(c, issuer_cert, NID_key_usage, ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
    add_ext(c, issuer_cert, NID_subject_key_identifier, "hash");
    if (issuer) add_ext(c, issuer_cert, NID_authority_key_identifier, "keyid:always");
    if (!ca) add_ext(c, issuer_cert, NID_ext_key_usage, "serverAuth");
    if (!sans.empty()) add_ext(c, issuer_cert, NID_subject_alt_name, sans);
    if (X509_sign(c, issuer ? issuer->key.get() : key, EVP_sha256()) == 0) openssl_fail("X509_sign");
    return cert;
}

Identity make_ca(const std::string& cn) {
    Identity ca{nullptr, make_key()};
    ca.cert = make_cert(ca.key.get(), cn, nullptr, true, "");
    return ca;
}

Identity make_leaf(const Identity* issuer, const std::string& sans, long from_s = -3600, long to_s = 86400) {
    Identity leaf{nullptr, make_key()};
    leaf.cert = make_cert(leaf.key.get(), "clientbench test server", issuer, false, sans, from_s, to_s);
    return leaf;
}

Identity make_self_signed() {  // a leaf certificate that is its own issuer
    Identity self{nullptr, make_key()};
    self.cert = make_cert(self.key.get(), "self-signed", nullptr, false, "DNS:localhost,IP:127.0.0.1");
    return self;
}

std::string pem(X509* cert) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    PEM_write_bio_X509(bio.get(), cert);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
}

// Generated once for all tests.
struct Pki {
    Identity ca = make_ca("clientbench test CA");
    Identity other_ca = make_ca("another test CA");
    Identity server = make_leaf(&ca, "DNS:localhost,IP:127.0.0.1,IP:::1");
    Identity dns_only = make_leaf(&ca, "DNS:localhost");
    Identity wrong_name = make_leaf(&ca, "DNS:other.example");
    Identity expired = make_leaf(&ca, "DNS:localhost,IP:127.0.0.1", -2 * 86400, -86400);
    Identity untrusted = make_leaf(&other_ca, "DNS:localhost,IP:127.0.0.1");
    Identity self_signed = make_self_signed();
    std::filesystem::path dir;
    std::string ca_file;  // the test CA's certificate (PEM)

    Pki() {
        char tmpl[] = "/tmp/beast-tls-test-XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        dir = tmpl;
        ca_file = (dir / "ca.pem").string();
        std::ofstream(ca_file) << pem(ca.cert.get());
    }
    ~Pki() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

Pki& pki() {
    static Pki instance;
    return instance;
}

TlsConfig trust_test_ca() { return TlsConfig{true, pki().ca_file}; }

// ---- the server ------------------------------------------------------------------------------------------

class TlsServer;

// One accepted connection, TLS (OpenSSL on the blocking socket) unless the server is raw.
class Conn {
public:
    Conn(std::shared_ptr<tcp::socket> sock, SSL* ssl, int index, TlsServer& server)
        : sock_(std::move(sock)), ssl_(ssl), index_(index), server_(server) {}
    ~Conn() {
        if (ssl_) SSL_free(ssl_);
    }

    int index() const { return index_; }
    int fd() { return sock_->native_handle(); }

    // Reads one request (headers + Content-Length body). False on EOF / error / shutdown.
    bool read_request(std::string* out = nullptr);
    // Some bytes (raw servers: whatever the client sent first). False on EOF / error.
    bool read_some(std::string& out) {
        char chunk[4096];
        const long n = read_chunk(chunk, sizeof chunk);
        if (n <= 0) return false;
        out.append(chunk, static_cast<std::size_t>(n));
        return true;
    }
    bool write(const std::string& data) {
        std::size_t done = 0;
        while (done < data.size()) {
            long n;
            if (ssl_) {
                n = SSL_write(ssl_, data.data() + done, static_cast<int>(data.size() - done));
            } else {
                n = ::send(fd(), data.data() + done, data.size() - done, MSG_NOSIGNAL);
            }
            if (n <= 0) return false;
            done += static_cast<std::size_t>(n);
        }
        return true;
    }
    // Sends the TLS close_notify alert; does not wait for the client's.
    void close_notify() {
        if (ssl_) SSL_shutdown(ssl_);
    }
    // TCP close (FIN), with or without a close_notify before it.
    void close() {
        boost::system::error_code ec;
        sock_->shutdown(tcp::socket::shutdown_both, ec);
        sock_->close(ec);
    }
    // Waits up to `limit` for the next request to start (or the peer to close); false when the connection
    // stayed idle that long (a server's keep-alive timeout).
    bool wait_readable(std::chrono::milliseconds limit) {
        if (!buf_.empty() || (ssl_ && SSL_pending(ssl_) > 0)) return true;
        pollfd p{fd(), POLLIN, 0};
        return ::poll(&p, 1, static_cast<int>(limit.count())) > 0;
    }
    // Reads the raw socket (below TLS) until the peer closes or the server shuts down; returns the bytes.
    std::size_t drain_raw() {
        char c[4096];
        std::size_t total = 0;
        for (;;) {
            const auto n = ::recv(fd(), c, sizeof c, 0);
            if (n <= 0) return total;
            total += static_cast<std::size_t>(n);
        }
    }

private:
    long read_chunk(char* data, std::size_t size) {
        if (ssl_) return SSL_read(ssl_, data, static_cast<int>(size));
        return ::recv(fd(), data, size, 0);
    }

    std::shared_ptr<tcp::socket> sock_;
    SSL* ssl_;
    int index_;
    TlsServer& server_;
    std::string buf_;
};

struct ServerOptions {
    const Identity* identity = nullptr;  // nullptr: a raw TCP server (no TLS)
    int min_version = 0;                 // e.g. TLS1_3_VERSION
    int max_version = 0;
    std::chrono::milliseconds handshake_delay{0};
};

class TlsServer {
public:
    using Handler = std::function<void(Conn&)>;

    TlsServer(ServerOptions options, Handler handler)
        : options_(options), handler_(std::move(handler)), ctx_(net::ssl::context::tls_server), acceptor_(ioc_) {
        std::signal(SIGPIPE, SIG_IGN);  // OpenSSL writes with write(2): a client that has gone must not kill us
        if (options_.identity) {
            SSL_CTX* c = ctx_.native_handle();
            if (SSL_CTX_use_certificate(c, options_.identity->cert.get()) != 1 ||
                SSL_CTX_use_PrivateKey(c, options_.identity->key.get()) != 1)
                openssl_fail("server certificate");
            if (options_.min_version) SSL_CTX_set_min_proto_version(c, options_.min_version);
            if (options_.max_version) {
                SSL_CTX_set_security_level(c, 0);  // lets a test offer TLS 1.0/1.1 only
                SSL_CTX_set_max_proto_version(c, options_.max_version);
            }
            SSL_CTX_set_tlsext_servername_callback(c, &TlsServer::on_servername);
            SSL_CTX_set_tlsext_servername_arg(c, this);
        }
        const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
        acceptor_.open(ep.protocol());
        acceptor_.set_option(tcp::acceptor::reuse_address(true));
        acceptor_.bind(ep);
        acceptor_.listen();
        port_ = acceptor_.local_endpoint().port();
        accept_thread_ = std::thread([this] { accept_loop(); });
    }

    ~TlsServer() {
        stopping_ = true;
        {  // unblock accept() by connecting to ourselves
            boost::system::error_code ec;
            tcp::socket s(ioc_);
            s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_), ec);
            accept_thread_.join();
        }
        std::vector<std::thread> threads;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (auto& s : sockets_) ::shutdown(s->native_handle(), SHUT_RDWR);
            threads.swap(threads_);
        }
        for (auto& t : threads) t.join();
    }

    std::uint16_t port() const { return port_; }
    std::string url(const std::string& path = "/", const std::string& host = "127.0.0.1",
                    const std::string& scheme = "https") const {
        return scheme + "://" + host + ":" + std::to_string(port_) + path;
    }
    int accepts() const { return accepts_.load(); }
    int handshakes() const { return handshakes_.load(); }
    int failed_handshakes() const { return failed_handshakes_.load(); }

    std::vector<std::string> requests() {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }
    std::vector<std::string> server_names() {  // SNI per handshake ("" when none was sent)
        std::lock_guard<std::mutex> lock(mutex_);
        return server_names_;
    }
    void record(const std::string& request) {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back(request);
    }

private:
    static int on_servername(SSL* ssl, int*, void* arg) {
        const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        auto* self = static_cast<TlsServer*>(arg);
        std::lock_guard<std::mutex> lock(self->mutex_);
        self->server_names_.push_back(name ? name : "");
        return SSL_TLSEXT_ERR_OK;
    }

    void accept_loop() {
        for (;;) {
            auto sock = std::make_shared<tcp::socket>(ioc_);
            boost::system::error_code ec;
            acceptor_.accept(*sock, ec);
            if (stopping_ || ec) return;
            const int index = accepts_++;
            std::lock_guard<std::mutex> lock(mutex_);
            sockets_.push_back(sock);
            threads_.emplace_back([this, sock, index] { serve(sock, index); });
        }
    }

    void serve(const std::shared_ptr<tcp::socket>& sock, int index) {
        SSL* ssl = nullptr;
        if (options_.identity) {
            std::this_thread::sleep_for(options_.handshake_delay);
            ssl = SSL_new(ctx_.native_handle());
            SSL_set_fd(ssl, sock->native_handle());
            if (SSL_accept(ssl) != 1) {
                ERR_clear_error();
                ++failed_handshakes_;
                SSL_free(ssl);
                // read what the client sent before closing, as servers do (unread data would make the close
                // a reset)
                timeval tv{0, 200000};
                ::setsockopt(sock->native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
                char sink[4096];
                while (::recv(sock->native_handle(), sink, sizeof sink, MSG_DONTWAIT) > 0) {
                }
                ::shutdown(sock->native_handle(), SHUT_WR);
                while (::recv(sock->native_handle(), sink, sizeof sink, 0) > 0) {
                }
                boost::system::error_code ec;
                sock->close(ec);
                return;
            }
            ++handshakes_;
        }
        Conn conn(sock, ssl, index, *this);
        try {
            handler_(conn);
        } catch (...) {
        }
        ERR_clear_error();
    }

    ServerOptions options_;
    Handler handler_;
    net::io_context ioc_;
    net::ssl::context ctx_;
    tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> accepts_{0};
    std::atomic<int> handshakes_{0};
    std::atomic<int> failed_handshakes_{0};
    std::thread accept_thread_;
    std::mutex mutex_;
    std::vector<std::shared_ptr<tcp::socket>> sockets_;
    std::vector<std::thread> threads_;
    std::vector<std::string> requests_;
    std::vector<std::string> server_names_;
};

bool Conn::read_request(std::string* out) {
    std::size_t header_end;
    char chunk[4096];
    while ((header_end = buf_.find("\r\n\r\n")) == std::string::npos) {
        const long n = read_chunk(chunk, sizeof chunk);
        if (n <= 0) return false;
        buf_.append(chunk, static_cast<std::size_t>(n));
    }
    std::size_t length = 0;
    std::string lower;
    for (std::size_t i = 0; i < header_end; ++i) lower += static_cast<char>(std::tolower(buf_[i]));
    if (const auto p = lower.find("\r\ncontent-length:"); p != std::string::npos)
        length = std::stoul(lower.substr(p + 17));
    const std::size_t total = header_end + 4 + length;
    while (buf_.size() < total) {
        const long n = read_chunk(chunk, sizeof chunk);
        if (n <= 0) return false;
        buf_.append(chunk, static_cast<std::size_t>(n));
    }
    const std::string request = buf_.substr(0, total);
    buf_.erase(0, total);
    server_.record(request);
    if (out) *out = request;
    return true;
}

const std::string kHello = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello";

TlsServer::Handler answer_all(std::string response) {
    return [response](Conn& c) {
        while (c.read_request()) c.write(response);
    };
}

ServerOptions tls_with(const Identity& identity) {
    ServerOptions o;
    o.identity = &identity;
    return o;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Runs `call`, expects a TLSError whose message contains `text`; returns the message.
template <class Call>
std::string expect_tls_error(Call&& call, const std::string& text) {
    try {
        call();
        ADD_FAILURE() << "no error (expected a TLSError with '" << text << "')";
    } catch (const beast_client::TLSError& e) {
        EXPECT_STREQ(e.type_name(), "TLSError");
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected a TLSError with '" << text << "', got: " << e.what();
    }
    return {};
}

}  // namespace

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

// ---- the wrong protocol, timeouts, cancellation ------------------------------------------------------

// An https:// URL to a plain HTTP server: it answers the ClientHello with a 400 (as HTTP servers do with a
// garbage request line) and closes: a TLSError that says so, at once.
TEST(Tls, HttpsToAPlainHttpServerIsATlsError) {
    TlsServer server(ServerOptions{}, [](Conn& c) {
        std::string got;
        c.read_some(got);
        c.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        c.close();
    });
    Client c(3s, trust_test_ca());
    const auto t0 = Clock::now();
    expect_tls_error([&] { c.get(server.url()); }, "is it a plain http:// server?");
    EXPECT_LT(ms_since(t0), 1000.0);
}

TEST(Tls, ServerClosingDuringTheHandshakeIsATlsError) {
    TlsServer server(ServerOptions{}, [](Conn& c) {
        std::string got;
        c.read_some(got);
        c.close();
    });
    Client c(3s, trust_test_ca());
    expect_tls_error([&] { c.get(server.url()); }, "the server closed the connection during the handshake");
}

// An http:// URL to a TLS server. What the client sees depends on the server: an OpenSSL server recognises
// the HTTP request line and closes without an alert: a ConnectionError ("closed by the server before a
// response was received"), at once.
TEST(Tls, HttpToAnOpenSslServerIsAConnectionError) {
    TlsServer server(tls_with(pki().server), answer_all(kHello));
    Client c(3s, trust_test_ca());
    const auto t0 = Clock::now();
    try {
        c.get(server.url("/", "127.0.0.1", "http"));
        FAIL() << "no error";
    } catch (const beast_client::TLSError& e) {
        FAIL() << "TLSError: " << e.what();
    } catch (const beast_client::ConnectionError& e) {
        EXPECT_NE(std::string(e.what()).find("closed by the server before a response was received"), std::string::npos)
            << e.what();
    }
    EXPECT_LT(ms_since(t0), 1000.0);
    EXPECT_EQ(server.failed_handshakes(), 1);
}

// ... servers that answer with a TLS alert record (rustls, Go) give a ProtocolError that names the likely cause.
TEST(Tls, HttpToAServerAnsweringWithATlsAlertIsAProtocolError) {
    TlsServer server(ServerOptions{}, [](Conn& c) {
        std::string got;
        c.read_some(got);
        c.write(std::string("\x15\x03\x03\x00\x02\x02\x32", 7));  // alert: fatal, decode_error
        c.close();
    });
    Client c(3s);
    const auto t0 = Clock::now();
    try {
        c.get(server.url("/", "127.0.0.1", "http"));
        FAIL() << "no error";
    } catch (const beast_client::ProtocolError& e) {
        EXPECT_NE(std::string(e.what()).find("the server answered with a TLS alert: is it an https:// server?"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_LT(ms_since(t0), 1000.0);
}

TEST(Tls, ServerThatNeverAnswersTheClientHelloTimesOut) {
    TlsServer server(ServerOptions{}, [](Conn& c) { c.drain_raw(); });  // accepts TCP, reads, never answers
    Client c(300ms, trust_test_ca());
    const auto t0 = Clock::now();
    try {
        c.get(server.url());
        FAIL() << "no error";
    } catch (const beast_client::TimeoutError& e) {
        EXPECT_NE(std::string(e.what()).find("(while performing the TLS handshake)"), std::string::npos) << e.what();
    }
    const double ms = ms_since(t0);
    EXPECT_GE(ms, 290.0);
    EXPECT_LT(ms, 1000.0);
    EXPECT_FALSE(c.connected());
}

// The timeout bounds connect + handshake + exchange together: a handshake that takes 250 ms leaves 150 ms of
// a 400 ms timeout for the response.
TEST(Tls, TimeoutCoversTheHandshakeAndTheExchange) {
    ServerOptions slow_handshake = tls_with(pki().server);
    slow_handshake.handshake_delay = 250ms;
    TlsServer fast(slow_handshake, answer_all(kHello));
    TlsServer slow(slow_handshake, [](Conn& c) {
        while (c.read_request()) {
            std::this_thread::sleep_for(250ms);
            c.write(kHello);
        }
    });
    Client c(400ms, trust_test_ca());
    EXPECT_EQ(c.get(fast.url()), 200);
    const auto t0 = Clock::now();
    try {
        c.get(slow.url());
        FAIL() << "no error";
    } catch (const beast_client::TimeoutError& e) {
        EXPECT_NE(std::string(e.what()).find("(while reading the response)"), std::string::npos) << e.what();
    }
    const double ms = ms_since(t0);
    EXPECT_GE(ms, 390.0);
    EXPECT_LT(ms, 1000.0);
}

TEST(Tls, CancelDuringTheHandshake) {
    TlsServer server(ServerOptions{}, [](Conn& c) { c.drain_raw(); });
    Client c(10s, trust_test_ca(), 20ms);
    const auto t0 = Clock::now();
    try {
        c.get(server.url(), [&] { return ms_since(t0) > 100.0; });
        FAIL() << "no error";
    } catch (const beast_client::Cancelled& e) {
        EXPECT_NE(std::string(e.what()).find("TLS handshake"), std::string::npos) << e.what();
    }
    EXPECT_LT(ms_since(t0), 600.0);
    EXPECT_FALSE(c.connected());
}

// ---- idle connections and closes over TLS ------------------------------------------------------------

// The server ends each connection after one response while it is idle, in the three ways servers do: a
// close_notify and a FIN; a FIN alone; a close_notify alone (the TCP connection stays open until the client
// closes it). The client's idle check sees each, and the next request goes on a new connection: the old one
// never carries a byte of it.
TEST(Tls, IdleCloseIsSeenBeforeReuse) {
    for (const std::string how : {"close_notify+FIN", "FIN", "close_notify"}) {
        std::atomic<std::size_t> late_bytes{0};
        TlsServer server(tls_with(pki().server), [&](Conn& c) {
            if (!c.read_request()) return;
            c.write(kHello);
            std::this_thread::sleep_for(20ms);
            if (how != "FIN") c.close_notify();
            if (how != "close_notify") {
                c.close();
                return;
            }
            late_bytes += c.drain_raw();  // until the client closes: it must send nothing more
        });
        Client c(5s, trust_test_ca());
        EXPECT_EQ(c.get(server.url()), 200) << how;
        EXPECT_TRUE(c.connected()) << how;
        std::this_thread::sleep_for(100ms);  // the server's close arrives while the connection is idle
        EXPECT_EQ(c.request("POST", server.url(), {}, "not to be lost").status, 200) << how;
        EXPECT_EQ(c.get(server.url()), 200) << how;  // (the second connection was closed the same way)
        c.close();
        EXPECT_EQ(server.accepts(), 3) << how;
        EXPECT_EQ(c.connections_opened(), 3u) << how;
        EXPECT_EQ(server.requests().size(), 3u) << how;
        std::this_thread::sleep_for(20ms);
        EXPECT_EQ(late_bytes.load(), 0u) << how;
    }
}

// The server closes a re-used connection just as the request arrives (it read it, no response): GET is sent
// again on a new connection, POST is not (ConnectionError, not TLSError: the TLS layer did nothing wrong).
TEST(Tls, ClosedAfterTheRequestArrivedOnlyIdempotentMethodsAreResent) {
    TlsServer server(tls_with(pki().server), [](Conn& c) {
        std::string req;
        if (!c.read_request(&req)) return;
        c.write(kHello);
        if (req.rfind("GET /setup ", 0) == 0) {
            c.read_request();
            c.close_notify();
            c.close();
            return;
        }
        while (c.read_request()) c.write(kHello);
    });
    {
        Client c(5s, trust_test_ca());
        ASSERT_EQ(c.get(server.url("/setup")), 200);
        EXPECT_EQ(c.get(server.url("/again")), 200);
        EXPECT_EQ(c.connections_opened(), 2u);
    }
    {
        Client c(5s, trust_test_ca());
        ASSERT_EQ(c.get(server.url("/setup")), 200);
        try {
            c.request("POST", server.url("/post"), {}, "once");
            FAIL() << "no error";
        } catch (const beast_client::TLSError& e) {
            FAIL() << "TLSError: " << e.what();
        } catch (const beast_client::ConnectionError& e) {
            EXPECT_NE(std::string(e.what()).find("POST is not idempotent: not re-sent"), std::string::npos) << e.what();
        }
        EXPECT_EQ(c.connections_opened(), 1u);
    }
    int posts = 0;
    for (const auto& q : server.requests()) posts += q.rfind("POST /post ", 0) == 0;
    EXPECT_EQ(posts, 1);
}

// A body delimited by the end of the connection is complete whether the server ends it with a close_notify
// or just closes (most servers do not send one); a Content-Length body cut short is a ConnectionError.
TEST(Tls, EndOfConnectionBodiesAndShortBodies) {
    for (const bool notify : {true, false}) {
        TlsServer server(tls_with(pki().server), [notify](Conn& c) {
            std::string req;
            if (!c.read_request(&req)) return;
            if (req.rfind("GET /short ", 0) == 0)
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
            else
                c.write("HTTP/1.1 200 OK\r\n\r\nhello until the end");
            if (notify) c.close_notify();
            c.close();
        });
        Client c(5s, trust_test_ca());
        EXPECT_EQ(c.get(server.url()), 200) << notify;
        EXPECT_EQ(c.last_body_bytes(), 19u) << notify;
        EXPECT_FALSE(c.connected()) << notify;
        EXPECT_EQ(c.request("GET", server.url()).body, "hello until the end") << notify;
        try {
            c.get(server.url("/short"));
            FAIL() << "no error";
        } catch (const beast_client::TLSError& e) {
            FAIL() << "TLSError: " << e.what();
        } catch (const beast_client::ConnectionError& e) {
            EXPECT_NE(std::string(e.what()).find("before the response was complete"), std::string::npos) << e.what();
        }
        EXPECT_EQ(c.last_body_bytes(), 3u);
    }
}

TEST(Tls, ConnectionCloseMakesTheNextRequestReconnect) {
    TlsServer server(tls_with(pki().server), [](Conn& c) {
        if (c.read_request()) c.write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
        c.close();
    });
    Client c(5s, trust_test_ca());
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_FALSE(c.connected());
    EXPECT_EQ(c.get(server.url()), 200);
    EXPECT_EQ(server.handshakes(), 2);
    EXPECT_TRUE(c.tls_info());  // kept after the connection closed
}
