// The TLS server of the TLS tests, on 127.0.0.1: it accepts with the shared AcceptLoop, is configured through
// a boost::asio::ssl::context and speaks TLS with OpenSSL directly on the blocking socket (so that a test can
// send a close_notify without waiting for the client's); without an identity it is a raw TCP server. Every
// test is bounded in time: client timeouts are short and the server shuts its sockets down when it is
// destroyed.
#pragma once

#include "beast_client/client.hpp"
#include "server_base.hpp"
#include "tls_pki.hpp"

#include <boost/asio/ssl/context.hpp>

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tls_test {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using test_support::AcceptLoop;
using test_support::Clock;
using test_support::kHello;
using test_support::ms_since;
using test_support::read_http_request;

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
        : options_(options), handler_(std::move(handler)), ctx_(net::ssl::context::tls_server) {
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
        loop_.start([this](const std::shared_ptr<tcp::socket>& sock, int index) { serve(sock, index); });
    }

    ~TlsServer() { loop_.stop(); }

    std::uint16_t port() const { return loop_.port(); }
    std::string url(const std::string& path = "/", const std::string& host = "127.0.0.1",
                    const std::string& scheme = "https") const {
        return scheme + "://" + host + ":" + std::to_string(port()) + path;
    }
    int accepts() const { return loop_.accepts(); }
    int handshakes() const { return handshakes_.load(); }
    int failed_handshakes() const { return failed_handshakes_.load(); }
    int resumed() const { return resumed_.load(); }  // handshakes that resumed a session

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
            if (SSL_session_reused(ssl)) ++resumed_;
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
    net::ssl::context ctx_;
    std::atomic<int> handshakes_{0};
    std::atomic<int> failed_handshakes_{0};
    std::atomic<int> resumed_{0};
    std::mutex mutex_;
    std::vector<std::string> requests_;
    std::vector<std::string> server_names_;
    AcceptLoop loop_;  // last: stopped before the members its handlers use go
};

inline bool Conn::read_request(std::string* out) {
    std::string request;
    if (!read_http_request(
            buf_, [this](char* data, std::size_t size) { return read_chunk(data, size); }, request))
        return false;
    server_.record(request);
    if (out) *out = request;
    return true;
}

inline TlsServer::Handler answer_all(std::string response) {
    return [response](Conn& c) {
        while (c.read_request()) c.write(response);
    };
}

inline ServerOptions tls_with(const Identity& identity) {
    ServerOptions o;
    o.identity = &identity;
    return o;
}

// Runs `call`, expects a TLSError whose message contains `text`; returns the message.
template <class Call>
inline std::string expect_tls_error(Call&& call, const std::string& text) {
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

}  // namespace tls_test
