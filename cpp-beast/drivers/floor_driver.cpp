// floor-driver: the raw-socket floor of the clientbench table.
//
// Each worker owns one blocking TCP socket (TCP_NODELAY) and, per request, writes one pre-built
// `GET <target> HTTP/1.1` request and reads exactly one response: the head up to CRLFCRLF, the status
// code, Content-Length, then exactly that many body bytes (counted, not kept). A POST / PUT is pre-built the
// same way, with its Content-Length and body; its response body is handed to the harness as it is read, which
// compares it with the /upload line (or the body echoed) without keeping it. --upload stream writes the head with
// `Transfer-Encoding: chunked`, then each chunk in its framing as the harness cuts it (never the whole body);
// --download stream reads the body at most --chunk-size bytes per read(). No HTTP library, no
// allocation per request, no event loop: what is left is the kernel, the loopback and the server, i.e.
// the physical limit of this machine and server for the workload. It is deliberately minimal: responses
// without Content-Length (chunked, EOF-delimited) are a ProtocolError, and the timeout applies to each
// socket operation (SO_RCVTIMEO/SO_SNDTIMEO) rather than to the whole request (a deadline would cost a
// setsockopt per read); the harness still counts a request that ended after --timeout as a TimeoutError, as the
// contract bounds the whole request.
//
// A GET or PUT (idempotent, so sending it again is harmless) on a re-used connection that the server closed
// meanwhile (EOF or reset before any response byte) is retried once on a new connection (a streamed body from
// its first chunk again), a POST only when none of it had been written, and `Connection: close` is honoured. (Unlike
// the Beast client, it does not check an idle connection before re-using it.)
//
// https:// URLs: the same, with OpenSSL used directly on the blocking socket (SSL_connect, SSL_write of the
// pre-built request, SSL_read of exactly one Content-Length response), still no HTTP library. TLS 1.2 and 1.3,
// SNI, the chain checked against the system's roots or --ca-file and the host name / IP address against the
// certificate (OpenSSL's own checks, SSL_set1_host), or nothing with --insecure. A failed handshake is a
// TLSError; the connection is closed without a close_notify. An http:// request runs no TLS code.
#include "beast_client/client.hpp"
#include "floor_tls.hpp"
#include "harness.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

using beast_client::ConnectionError;
using beast_client::ProtocolError;
using beast_client::TLSError;

constexpr std::size_t kHeadLimit = 64 * 1024;
// Request bodies up to this size are part of the pre-built request (one write); larger ones are written
// separately from the harness's single copy, so W workers do not each hold one.
constexpr std::size_t kInlineBody = 1024 * 1024;
// A streamed chunk up to this size is copied into its framing (one write); a larger one is written as it is.
constexpr std::size_t kCopiedChunk = 64 * 1024;

bool iequals_prefix(std::string_view line, std::string_view name) {
    if (line.size() < name.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// Thrown when a re-used connection turns out to be closed before any byte of the response.
struct Stale {};

using floor_tls::openssl_error;
using floor_tls::shared_ssl_ctx;
using floor_tls::SslCtx;

class FloorClient final : public harness::Client {
public:
    explicit FloorClient(const harness::ClientOptions& o) : timeout_s_(o.timeout_s), options_(o), buf_(kHeadLimit) {
        if (!o.ca_file.empty()) ctx_ = shared_ssl_ctx(o);  // a bad --ca-file fails here (the harness checks)
    }
    ~FloorClient() override { disconnect(); }

    std::optional<beast_client::TlsInfo> tls_info() const override { return tls_info_; }
    // it sends HTTP/1.1 requests and reads only HTTP/1.x responses
    std::optional<std::string> protocol() const override { return "HTTP/1.1"; }

    harness::Fetch get(const std::string& url) override {
        if (url != url_text_ || method_ != "GET" || streamed_) prepare(url, "GET", {}, false);
        answer_ = nullptr;
        return send_kept(true);
    }

    // --phases: the same, with the clock read around each system call of a phase (stamp())
    harness::Fetch get_phases(const std::string& url, harness::Phases& phases) override {
        Recording on(*this, phases);
        return get(url);
    }
    int send_phases(const std::string& url, const std::string& method, harness::Outgoing& body, harness::Answer& answer,
                    harness::Phases& phases) override {
        Recording on(*this, phases);
        return send(url, method, body, answer);
    }

    int send(const std::string& url, const std::string& method, harness::Outgoing& body,
             harness::Answer& answer) override {
        const bool streamed = body.kind == harness::Outgoing::Kind::stream;
        if (url != url_text_ || method != method_ || streamed != streamed_ || body.whole.data() != body_.data() ||
            body.whole.size() != body_.size())
            prepare(url, method, body.whole, streamed);
        answer_ = &answer;
        outgoing_ = &body;
        from_start_ = body.chunks;  // a request sent again sends its chunks again
        return send_kept(method != "POST").status;
    }

private:
    std::string where() const { return url_.host + ":" + std::to_string(url_.port); }

    using Clock = std::chrono::steady_clock;
    // Records into `phases` for one request (phases_ is null otherwise: no clock is read).
    struct Recording {
        Recording(FloorClient& c, harness::Phases& phases) : c(c) { c.phases_ = &phases; }
        ~Recording() { c.phases_ = nullptr; }
        FloorClient& c;
    };
    // Recording: the phase in progress starts now.
    void mark() {
        if (phases_) mark_ = Clock::now();
    }
    // Recording: adds the time since mark() to `phase`; the next phase starts now.
    void stamp(std::chrono::nanoseconds harness::Phases::*phase) {
        if (!phases_) return;
        const auto now = Clock::now();
        phases_->*phase += now - mark_;
        mark_ = now;
    }

    // Builds the request of `method` with `body` (none for a GET) once: the head, with the body appended when
    // it is small; a larger one is written from the harness's copy, shared by every worker. A streamed body
    // (`streamed`) goes after the head in chunked framing, each chunk taken from the harness as it is written.
    void prepare(const std::string& url, const std::string& method, std::string_view body, bool streamed) {
        if (url != url_text_) {
            const beast_client::Url u = beast_client::parse_url(url);  // InvalidUrl on bad input
            // the kept connection serves every path of its origin (targets cycle through several)
            if (u.https != url_.https || u.host != url_.host || u.port != url_.port) disconnect();
            url_ = u;
            url_text_ = url;
        }
        method_ = method;
        streamed_ = streamed;
        body_ = body;
        request_ =
            method + " " + url_.target + " HTTP/1.1\r\nHost: " + url_.host + ":" + std::to_string(url_.port) + "\r\n";
        if (streamed)
            request_ += "Transfer-Encoding: chunked\r\n";
        else if (method != "GET")
            request_ += "Content-Length: " + std::to_string(body.size()) + "\r\n";
        request_ += "\r\n";
        separate_body_ = body.size() > kInlineBody;
        if (!separate_body_) request_ += body;
    }

    // One exchange on the kept connection. A re-used connection that turns out closed before any byte of the
    // response is replaced and the request sent again, once, when that is harmless: the method is idempotent
    // or no byte of the request had been written.
    harness::Fetch send_kept(bool idempotent) {
        const bool reused = fd_ >= 0;
        if (!reused) connect_socket();
        try {
            return exchange();
        } catch (const Stale&) {
            disconnect();
            if (!reused || (!idempotent && wrote_)) throw closed_before_response();
            connect_socket();
            try {
                return exchange();
            } catch (const Stale&) {
                disconnect();
                throw closed_before_response();
            }
        } catch (...) {
            disconnect();
            throw;
        }
    }

    ConnectionError closed_before_response() const {
        return ConnectionError("connection to " + where() + " closed before the response",
                               ConnectionError::Kind::reset);
    }

    void disconnect() {
        if (ssl_) SSL_free(ssl_);  // no SSL_shutdown: nothing waits for the server's close_notify
        ssl_ = nullptr;
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        have_ = 0;
    }

    [[noreturn]] void fail_errno(const char* what, int err) {
        disconnect();
        const std::string text = std::string(what) + " " + where() + ": " + std::strerror(err);
        if (err == EAGAIN || err == EWOULDBLOCK || err == EINPROGRESS || err == ETIMEDOUT)
            throw beast_client::TimeoutError(text);
        if (err == ECONNREFUSED) throw ConnectionError(text, ConnectionError::Kind::refused);
        if (err == ECONNRESET || err == EPIPE) throw ConnectionError(text, ConnectionError::Kind::reset);
        throw ConnectionError(text);
    }

    void connect_socket() {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        const std::string port = std::to_string(url_.port);
        unsigned char ip[16];
        const bool resolve =  // getaddrinfo() of an IP address resolves nothing: no dns phase
            ::inet_pton(AF_INET, url_.host.c_str(), ip) != 1 && ::inet_pton(AF_INET6, url_.host.c_str(), ip) != 1;
        if (resolve) mark();
        if (const int rc = ::getaddrinfo(url_.host.c_str(), port.c_str(), &hints, &res); rc != 0)
            throw ConnectionError("cannot resolve " + url_.host + ": " + ::gai_strerror(rc));
        if (resolve && phases_) {
            stamp(&harness::Phases::dns);
            phases_->resolved = true;
        }
        std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(res, ::freeaddrinfo);
        timeval tv{};
        const double t = std::min(timeout_s_, 3.0e8);
        tv.tv_sec = static_cast<time_t>(t);
        tv.tv_usec = static_cast<suseconds_t>((t - std::floor(t)) * 1e6);
        int last_err = ECONNREFUSED;
        for (addrinfo* ai = res; ai; ai = ai->ai_next) {
            const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0) {
                last_err = errno;
                continue;
            }
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // also bounds connect()
            mark();
            const int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
            stamp(&harness::Phases::connect);  // a failed attempt's time too (the next address is tried)
            if (rc == 0) {
                fd_ = fd;
                if (url_.https) handshake();
                return;
            }
            last_err = errno;
            ::close(fd);
        }
        fail_errno("connect to", last_err);
    }

    // The TLS handshake on the connected socket fd_ (each socket operation bounded by the timeout).
    void handshake() {
        if (!ctx_) ctx_ = shared_ssl_ctx(options_);
        ssl_ = SSL_new(ctx_.get());
        if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) {
            disconnect();
            throw TLSError("cannot set up TLS for " + where() + ": " + openssl_error("out of memory"));
        }
        unsigned char ip[16];
        const bool is_ip =
            ::inet_pton(AF_INET, url_.host.c_str(), ip) == 1 || ::inet_pton(AF_INET6, url_.host.c_str(), ip) == 1;
        if (!is_ip) SSL_set_tlsext_host_name(ssl_, url_.host.c_str());  // SNI: host names only
        if (!options_.insecure) {
            const int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), url_.host.c_str())
                                 : SSL_set1_host(ssl_, url_.host.c_str());
            if (ok != 1) {
                disconnect();
                throw TLSError("cannot verify the host name '" + url_.host + "': " + openssl_error("unknown error"));
            }
        }
        ERR_clear_error();
        mark();
        const int rc = SSL_connect(ssl_);
        if (rc == 1) {
            stamp(&harness::Phases::tls);
            tls_info_ = beast_client::TlsInfo{SSL_get_version(ssl_), SSL_get_cipher_name(ssl_)};
            return;
        }
        const int err = SSL_get_error(ssl_, rc);
        const int sys = errno;
        std::string why;
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ||
            (err == SSL_ERROR_SYSCALL && (sys == EAGAIN || sys == EWOULDBLOCK))) {
            ERR_clear_error();
            disconnect();
            throw beast_client::TimeoutError("TLS handshake with " + where() + " timed out");
        }
        if (err == SSL_ERROR_SSL && SSL_get_verify_result(ssl_) != X509_V_OK) {
            why =
                std::string("certificate verify failed: ") + X509_verify_cert_error_string(SSL_get_verify_result(ssl_));
            ERR_clear_error();
        } else if (err == SSL_ERROR_SYSCALL) {
            why = ERR_peek_error() != 0 ? openssl_error("")
                  : sys != 0            ? std::strerror(sys)
                                        : "the server closed the connection";
        } else {
            why = openssl_error("handshake failed");
        }
        disconnect();
        throw TLSError("TLS handshake with " + where() + " failed: " + why);
    }

    // SSL_read / SSL_write failed with `rc`: returns 0 for a clean EOF, else throws (errno-style where the
    // cause is the socket, so that fill()/exchange() see EAGAIN = timeout, ECONNRESET = reset).
    int tls_failure(int rc, const char* what) {
        const int err = SSL_get_error(ssl_, rc);
        const int sys = errno;
        if (err == SSL_ERROR_ZERO_RETURN) {
            ERR_clear_error();
            return 0;
        }
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
            ERR_clear_error();
            return EAGAIN;
        }
        if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return sys == 0 ? 0 : sys;
        const std::string text = openssl_error("TLS error");
        disconnect();
        throw TLSError(std::string("TLS error: ") + what + " " + where() + ": " + text);
    }

    // Reads more bytes (at most `limit`) into buf_ at have_; returns false on EOF.
    bool fill(std::size_t limit = SIZE_MAX) {
        const std::size_t room_left = std::min(buf_.size() - have_, limit);
        if (ssl_) {
            for (;;) {
                const int room = static_cast<int>(std::min<std::size_t>(room_left, INT_MAX));
                const int n = SSL_read(ssl_, buf_.data() + have_, room);
                if (n > 0) {
                    have_ += static_cast<std::size_t>(n);
                    return true;
                }
                const int err = tls_failure(n, "read from");
                if (err == 0) return false;
                if (err == EINTR) continue;
                fail_errno("read from", err);
            }
        }
        for (;;) {
            const ssize_t n = ::recv(fd_, buf_.data() + have_, room_left, 0);
            if (n > 0) {
                have_ += static_cast<std::size_t>(n);
                return true;
            }
            if (n == 0) return false;
            if (errno == EINTR) continue;
            fail_errno("read from", errno);
        }
    }

    // Writes data in full; Stale when the connection turns out closed.
    void write_all(std::string_view data) {
        std::size_t sent = 0;
        while (ssl_ && sent < data.size()) {
            const int chunk = static_cast<int>(std::min<std::size_t>(data.size() - sent, INT_MAX));
            const int n = SSL_write(ssl_, data.data() + sent, chunk);
            if (n <= 0) {
                const int err = tls_failure(n, "write to");
                if (err == EINTR) continue;
                if (err == 0 || err == EPIPE || err == ECONNRESET) throw Stale{};
                fail_errno("write to", err);
            }
            sent += static_cast<std::size_t>(n);
            wrote_ = true;
        }
        while (sent < data.size()) {
            const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno == EPIPE || errno == ECONNRESET) throw Stale{};
                fail_errno("write to", errno);
            }
            sent += static_cast<std::size_t>(n);
            wrote_ = true;
        }
    }

    // One chunk of a streamed body in chunked framing: one write when it is small enough to copy, else three.
    void write_chunk(std::string_view data) {
        char size[24];
        const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
        if (data.size() > kCopiedChunk) {
            write_all(std::string_view(size, static_cast<std::size_t>(n)));
            write_all(data);
            write_all("\r\n");
            return;
        }
        frame_.assign(size, static_cast<std::size_t>(n));
        frame_.append(data);
        frame_ += "\r\n";
        write_all(frame_);
    }

    harness::Fetch exchange() {
        // write the pre-built request
        wrote_ = false;
        mark();
        write_all(request_);
        if (separate_body_) write_all(body_);
        if (streamed_) {
            outgoing_->chunks = from_start_;
            std::string_view piece;
            while (outgoing_->chunks.next(piece)) write_chunk(piece);
            write_all("0\r\n\r\n");
        }
        stamp(&harness::Phases::send);
        // read the head (the first read that returns bytes ends `wait`)
        have_ = 0;
        bool first = true;
        std::size_t head_end = std::string_view::npos;
        while (head_end == std::string_view::npos) {
            if (have_ == buf_.size()) throw ProtocolError("response head from " + where() + " exceeds 64 KiB");
            bool got = false;
            try {
                got = fill();
            } catch (const ConnectionError& e) {
                if (have_ == 0 && e.kind() == ConnectionError::Kind::reset) throw Stale{};
                throw;
            }
            if (!got) {
                if (have_ == 0) throw Stale{};
                throw ConnectionError("connection to " + where() + " closed in the middle of the response head");
            }
            if (phases_ && first) {
                first = false;
                stamp(&harness::Phases::wait);
            }
            head_end = std::string_view(buf_.data(), have_).find("\r\n\r\n");
        }
        const std::string_view head(buf_.data(), head_end + 2);
        // status line: HTTP/1.x SSS reason
        const std::size_t eol = head.find("\r\n");
        const std::string_view status_line = head.substr(0, eol);
        if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ')
            throw ProtocolError("malformed status line from " + where());
        int status = 0;
        for (std::size_t i = 9; i < 12; ++i) {
            const char c = status_line[i];
            if (c < '0' || c > '9') throw ProtocolError("malformed status code from " + where());
            status = status * 10 + (c - '0');
        }
        // headers: Content-Length, Connection
        std::uint64_t length = 0;
        bool have_length = false;
        bool close_after = status_line[7] == '0';  // HTTP/1.0
        std::size_t pos = eol + 2;
        while (pos < head.size()) {
            const std::size_t end = head.find("\r\n", pos);
            const std::string_view line = head.substr(pos, end - pos);
            pos = end + 2;
            if (iequals_prefix(line, "content-length:")) {
                const std::string_view v = trim(line.substr(15));
                if (v.empty() || v.size() > 19) throw ProtocolError("bad Content-Length from " + where());
                length = 0;
                for (const char c : v) {
                    if (c < '0' || c > '9') throw ProtocolError("bad Content-Length from " + where());
                    length = length * 10 + static_cast<std::uint64_t>(c - '0');
                }
                have_length = true;
            } else if (iequals_prefix(line, "transfer-encoding:")) {
                throw ProtocolError("the floor client reads only Content-Length bodies (got Transfer-Encoding)");
            } else if (iequals_prefix(line, "connection:")) {
                std::string v(trim(line.substr(11)));
                std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
                close_after = v.find("close") != std::string::npos        ? true
                              : v.find("keep-alive") != std::string::npos ? false
                                                                          : close_after;
            }
        }
        const bool bodiless = status == 204 || status == 304 || (status >= 100 && status < 200);
        if (!have_length && !bodiless)
            throw ProtocolError("the floor client needs a Content-Length response from " + where());
        if (bodiless) length = 0;
        // body: what came with the head, then exactly the rest
        std::uint64_t got = std::min<std::uint64_t>(have_ - (head_end + 4), length);
        if (answer_) answer_->feed(std::string_view(buf_.data() + head_end + 4, static_cast<std::size_t>(got)));
        // --download stream: reads of at most C bytes
        const std::size_t piece = answer_ && answer_->piece() ? answer_->piece() : SIZE_MAX;
        while (got < length) {
            have_ = 0;
            if (!fill(static_cast<std::size_t>(std::min<std::uint64_t>(piece, length - got))))
                throw ConnectionError("connection to " + where() + " closed in the middle of the body");
            const std::uint64_t n = std::min<std::uint64_t>(have_, length - got);
            if (answer_) answer_->feed(std::string_view(buf_.data(), static_cast<std::size_t>(n)));
            got += n;
        }
        stamp(&harness::Phases::receive);
        have_ = 0;
        if (close_after) disconnect();
        return {status, length};
    }

    double timeout_s_;
    harness::ClientOptions options_;
    SslCtx ctx_;          // https: the process's, taken at the first connection (at construction with --ca-file)
    SSL* ssl_ = nullptr;  // https: the TLS session on fd_
    std::optional<beast_client::TlsInfo> tls_info_;
    int fd_ = -1;
    std::string url_text_;
    beast_client::Url url_{};
    std::string method_;
    std::string request_;                    // the head, and the body when it is at most kInlineBody bytes
    std::string_view body_;                  // the harness's request body
    bool separate_body_ = false;             // body_ is written after request_
    bool streamed_ = false;                  // the body is outgoing_'s chunks, in chunked framing
    bool wrote_ = false;                     // a byte of the current request has been written
    harness::Outgoing* outgoing_ = nullptr;  // send(): the body
    harness::Chunks from_start_;             // send(): its chunks from the start
    harness::Answer* answer_ = nullptr;      // send(): takes the response body (get(): counted only)
    harness::Phases* phases_ = nullptr;      // --phases: where the current request's phases go
    Clock::time_point mark_{};               // --phases: the phase in progress started then
    std::string frame_;                      // a streamed chunk in its framing
    std::vector<char> buf_;
    std::size_t have_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    const harness::Driver driver{
        "floor-driver",
        "C++",
        "raw socket",
        "POSIX sockets",
        std::string("pre-built request, Content-Length responses only, blocking socket per thread; https: ") +
            OpenSSL_version(OPENSSL_VERSION),
        "\nThe floor: a minimal raw-socket client that sends a pre-built request (GET, or POST / PUT with its\n"
        "body) and reads exactly one Content-Length response per request (one blocking socket per thread;\n"
        "https: OpenSSL directly on it). Prints one clientbench.raw/4 JSON document on stdout (see\n"
        "docs/raw-format.md).",
        [](const harness::ClientOptions& o) { return std::make_unique<FloorClient>(o); },
        false,
        "the floor's client is one raw socket, used by one thread",
        "the floor driver speaks HTTP/1.1",
        {},
        {},
        {},
        {"connect", "tls", "send", "wait", "receive"},  // --phases (dns when it resolves a name)
    };
    // OpenSSL writes to the socket with write(2): a peer that has closed must not kill the process
    std::signal(SIGPIPE, SIG_IGN);
    return harness::main(argc, argv, driver);
}
