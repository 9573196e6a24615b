// The only translation unit that includes Boost.Beast / Boost.Asio / OpenSSL (slow to compile: keep it that way).
#include "beast_client/client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/verify_context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/version.hpp>
#include <boost/optional/optional.hpp>
#include <boost/version.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>

namespace beast_client {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

namespace {

// ---- small helpers --------------------------------------------------------------------------------

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// RFC 9110 token characters (methods, header names)
bool is_tchar(char c) {
    if (is_alpha(c) || is_digit(c)) return true;
    // clang-format off
    switch (c) {
        case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
        case '.': case '^': case '_': case '`': case '|': case '~':
            return true;
        default:
            return false;
    }
    // clang-format on
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

// For error messages: the input with control / non-ASCII bytes escaped, cut at 200 characters.
std::string printable(std::string_view s) {
    std::string out;
    const std::size_t limit = 200;
    for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (s.size() > limit) out += "...";
    return out;
}

beast::string_view bsv(std::string_view s) { return {s.data(), s.size()}; }
std::string str(beast::string_view s) { return std::string(s.data(), s.size()); }

std::string host_port(const std::string& host, std::uint16_t port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string seconds_text(std::chrono::nanoseconds d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g s", std::chrono::duration<double>(d).count());
    return buf;
}

// ---- the response parser ------------------------------------------------------------------------------
// A basic_parser that keeps only what the caller asks for: get() counts the body and keeps neither the
// body nor the fields; request() keeps both. (http::response_parser would store the fields in
// basic_fields, which also limits a single field value to 64 KiB.)

class ResponseReader final : public http::basic_parser<false> {
public:
    ResponseReader(bool keep_headers, bool keep_body) : keep_headers_(keep_headers), keep_body_(keep_body) {}

    int status = 0;
    Headers headers;
    std::string body;
    std::uint64_t body_bytes = 0;

private:
    void on_request_impl(http::verb, beast::string_view, beast::string_view, int, beast::error_code&) override {}

    void on_response_impl(int code, beast::string_view, int, beast::error_code&) override { status = code; }

    void on_field_impl(http::field, beast::string_view name, beast::string_view value, beast::error_code&) override {
        if (keep_headers_) headers.emplace_back(str(name), str(value));
    }

    void on_header_impl(beast::error_code&) override {}

    void on_body_init_impl(const boost::optional<std::uint64_t>& length, beast::error_code&) override {
        if (keep_body_ && length) body.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*length, 64u << 20)));
    }

    std::size_t on_body_impl(beast::string_view data, beast::error_code&) override {
        body_bytes += data.size();
        if (keep_body_) body.append(data.data(), data.size());
        return data.size();
    }

    void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}

    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view data, beast::error_code& ec) override {
        return on_body_impl(data, ec);
    }

    void on_finish_impl(beast::error_code&) override {}

    bool keep_headers_;
    bool keep_body_;
};

// ---- error classification ---------------------------------------------------------------------------

enum class Phase { resolve, connect, handshake, write, read };

const char* phase_text(Phase p) {
    switch (p) {
        case Phase::resolve: return "resolving the host";
        case Phase::connect: return "connecting";
        case Phase::handshake: return "performing the TLS handshake";
        case Phase::write: return "sending the request";
        case Phase::read: return "reading the response";
    }
    return "";
}

bool is_http_error(const beast::error_code& ec) {
    return ec.category() == http::make_error_code(http::error::end_of_stream).category();
}

ConnectionError::Kind kind_of(const beast::error_code& ec) {
    if (ec == net::error::connection_refused) return ConnectionError::Kind::refused;
    if (ec == net::error::connection_reset || ec == net::error::broken_pipe || ec == net::error::connection_aborted)
        return ConnectionError::Kind::reset;
    return ConnectionError::Kind::other;
}

// RFC 9110 9.2.2: a request with an idempotent method may be sent again after a connection failure; any
// other (POST, PATCH, CONNECT, extension methods) must not be, once it may have reached the server.
bool is_idempotent(http::verb method) {
    switch (method) {
        case http::verb::get:
        case http::verb::head:
        case http::verb::options:
        case http::verb::trace:
        case http::verb::put:
        case http::verb::delete_: return true;
        default: return false;
    }
}

// The connection failed the way a kept-alive connection does when the server had closed it (idle close /
// reset) by the time the request arrived.
// (Over TLS, a peer that closes without close_notify gives stream_truncated; the read path turns it into
// end_of_stream / partial_message as Beast does for EOF.)
bool is_stale_connection(const beast::error_code& ec) {
    return ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
           ec == net::error::broken_pipe || ec == net::error::connection_aborted || ec == ssl::error::stream_truncated;
}

bool is_tls_error(const beast::error_code& ec) {
    return ec.category() == net::error::get_ssl_category() && ec != ssl::error::stream_truncated;
}

// The reason of a failed handshake: the certificate verification result when that is what failed, a hint
// when the server does not seem to speak TLS.
std::string handshake_failure(const beast::error_code& ec, SSL* ssl) {
    if (ec == net::error::eof || ec == ssl::error::stream_truncated)
        return "the server closed the connection during the handshake";
    if (ec.category() != net::error::get_ssl_category()) return ec.message();
    const auto reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
    if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED) {
        const long result = SSL_get_verify_result(ssl);
        if (result != X509_V_OK)
            return std::string("certificate verify failed: ") + X509_verify_cert_error_string(result);
    }
    std::string msg = ec.message();
    if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
        reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST)
        msg += " (the server does not answer in TLS: is it a plain http:// server?)";
    return msg;
}

[[noreturn]] void fail(const beast::error_code& ec, Phase phase, const std::string& where) {
    const std::string msg = ec.message();
    switch (phase) {
        case Phase::resolve: throw ConnectionError("cannot resolve the host of " + where + ": " + msg);
        case Phase::connect: throw ConnectionError("cannot connect to " + where + ": " + msg, kind_of(ec));
        case Phase::handshake: throw TLSError("TLS handshake with " + where + " failed: " + msg, kind_of(ec));
        case Phase::write:
            if (is_tls_error(ec)) throw TLSError("TLS error sending the request to " + where + ": " + msg);
            throw ConnectionError("error sending the request to " + where + ": " + msg, kind_of(ec));
        case Phase::read: break;
    }
    if (is_tls_error(ec)) throw TLSError("TLS error reading the response from " + where + ": " + msg);
    if (ec == http::error::end_of_stream || ec == net::error::eof)
        throw ConnectionError("connection to " + where + " closed by the server before a response was received",
                              ConnectionError::Kind::reset);
    if (ec == http::error::partial_message)
        throw ConnectionError("connection to " + where + " closed by the server before the response was complete",
                              ConnectionError::Kind::reset);
    if (ec == http::error::header_limit)
        throw ProtocolError("response headers from " + where + " exceed the limit of " + std::to_string(header_limit) +
                            " bytes");
    if (ec == http::error::body_limit)
        throw ProtocolError("response body from " + where + " exceeds the limit of " +
                            std::to_string(request_body_limit) + " bytes");
    if (is_http_error(ec)) throw ProtocolError("malformed HTTP response from " + where + ": " + msg);
    throw ConnectionError("error reading the response from " + where + ": " + msg, kind_of(ec));
}

}  // namespace

// ---- URL ------------------------------------------------------------------------------------------

Url parse_url(std::string_view url) {
    const auto bad = [&](const std::string& why) { return InvalidUrl("invalid URL '" + printable(url) + "': " + why); };
    if (url.empty()) throw InvalidUrl("invalid URL: empty string (expected http[s]://host[:port][/path])");
    for (char c : url) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) throw bad("contains whitespace or control characters");
    }
    const auto sep = url.find("://");
    if (sep == std::string_view::npos) throw bad("missing scheme (expected http[s]://host[:port][/path])");
    std::string scheme;
    for (char c : url.substr(0, sep)) scheme += ascii_lower(c);
    if (scheme != "http" && scheme != "https") throw bad("unsupported scheme '" + scheme + "' (http:// or https://)");

    const std::string_view rest = url.substr(sep + 3);
    const auto end = rest.find_first_of("/?#");
    const std::string_view authority = rest.substr(0, end);
    std::string_view tail = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    if (authority.find('@') != std::string_view::npos) throw bad("user info (user@host) is not supported");

    const bool https = scheme == "https";
    Url out{{}, static_cast<std::uint16_t>(https ? 443 : 80), {}, https};
    std::string_view host, port;
    bool has_port = false;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) throw bad("unterminated '[' in the host");
        host = authority.substr(1, close - 1);
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') throw bad("unexpected characters after ']'");
            has_port = true;
            port = after.substr(1);
        }
        beast::error_code ec;
        net::ip::make_address_v6(std::string(host), ec);
        if (host.empty() || ec) throw bad("invalid IPv6 address '" + std::string(host) + "'");
    } else {
        const auto colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            has_port = true;
            port = authority.substr(colon + 1);
        }
        if (host.empty()) throw bad("missing host");
        for (char c : host)
            if (!(is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_'))
                throw bad("invalid character '" + printable(std::string_view(&c, 1)) + "' in the host");
    }
    if (has_port) {
        if (port.empty()) throw bad("empty port");
        if (port.size() > 5 || !std::all_of(port.begin(), port.end(), is_digit))
            throw bad("port must be a number from 1 to 65535");
        const unsigned long value = std::stoul(std::string(port));
        if (value < 1 || value > 65535) throw bad("port must be a number from 1 to 65535");
        out.port = static_cast<std::uint16_t>(value);
    }
    for (char c : host) out.host += ascii_lower(c);

    const auto hash = tail.find('#');
    if (hash != std::string_view::npos) tail = tail.substr(0, hash);
    if (tail.empty() || tail.front() != '/') out.target = "/";
    out.target += std::string(tail);
    return out;
}

std::string library_version() {
    return std::to_string(BOOST_VERSION / 100000) + "." + std::to_string(BOOST_VERSION / 100 % 1000) + "." +
           std::to_string(BOOST_VERSION % 100);
}

// ---- Client ---------------------------------------------------------------------------------------

class Client::Guard {
public:
    explicit Guard(std::atomic<bool>& busy) : busy_(busy) {
        if (busy_.exchange(true, std::memory_order_acquire)) throw ConcurrentUse();
    }
    ~Guard() { busy_.store(false, std::memory_order_release); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

private:
    std::atomic<bool>& busy_;
};

namespace {

// ---- TLS set-up -----------------------------------------------------------------------------------

// Loads the CA certificates of `path` (a PEM file, or a directory of hashed certificates) into ctx.
void load_ca(ssl::context& ctx, const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw std::system_error(errno, std::generic_category(), "cannot open the CA file '" + path + "'");
    beast::error_code ec;
    if (S_ISDIR(st.st_mode)) {
        if (::access(path.c_str(), R_OK | X_OK) != 0)
            throw std::system_error(errno, std::generic_category(), "cannot read the CA directory '" + path + "'");
        ctx.add_verify_path(path, ec);
        if (ec) throw std::invalid_argument("cannot use the CA directory '" + path + "': " + ec.message());
        return;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open the CA file '" + path + "'");
    ::close(fd);
    ctx.load_verify_file(path, ec);
    ERR_clear_error();
    if (ec)
        throw std::invalid_argument("the CA file '" + path + "' holds no usable PEM certificate (" + ec.message() +
                                    ")");
}

// The system's trust store (OpenSSL's default paths), loaded once per process and shared by every Client that
// trusts it: parsing Debian's ~140 root certificates takes 50-100 ms with OpenSSL 3, too much for every new
// Client. An X509_STORE is reference-counted and safe to use from several threads (its lookups lock). It is
// never freed (nor re-read: a change to the system's store is seen by the next process).
X509_STORE* system_trust_store() {
    static X509_STORE* const store = [] {
        X509_STORE* s = X509_STORE_new();
        if (s && X509_STORE_set_default_paths(s) != 1) {
            X509_STORE_free(s);
            s = nullptr;
        }
        ERR_clear_error();
        return s;
    }();
    return store;
}

std::shared_ptr<ssl::context> make_tls_context(const TlsConfig& cfg) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    SSL_CTX* handle = ctx->native_handle();
    SSL_CTX_set_min_proto_version(handle, TLS1_2_VERSION);
    SSL_CTX_set_max_proto_version(handle, 0);  // the highest OpenSSL has: TLS 1.3
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
    if (!cfg.verify) {
        ctx->set_verify_mode(ssl::verify_none);
        return ctx;
    }
    ctx->set_verify_mode(ssl::verify_peer);
    if (cfg.ca_file.empty()) {  // set_default_verify_paths(), loaded once
        X509_STORE* store = system_trust_store();
        if (!store) throw TLSError("cannot load the system's trust store (OpenSSL's default verify paths)");
        SSL_CTX_set1_cert_store(handle, store);
    } else {
        load_ca(*ctx, cfg.ca_file);
    }
    return ctx;
}

// The TLS context of a TlsConfig, shared by every Client with the same configuration: SSL_CTX_new alone costs
// ~0.5 ms with OpenSSL 3 and loading a CA file more, which a program that creates a Client per request (the
// driver's --connection new) would pay every time. A context is never changed after it is set up, and
// OpenSSL allows SSL_new() on one SSL_CTX from several threads. A CA file is identified by its path and its
// device, inode, size and modification time, so a replaced or edited file is loaded again. At most
// kContextCache entries are kept (the oldest goes first; Clients keep theirs alive).
constexpr std::size_t kContextCache = 8;

std::shared_ptr<ssl::context> tls_context(const TlsConfig& cfg) {
    std::string key = cfg.verify ? "verify\n" : "none\n";
    if (cfg.verify && !cfg.ca_file.empty()) {
        struct stat st {};
        if (::stat(cfg.ca_file.c_str(), &st) != 0)
            throw std::system_error(errno, std::generic_category(), "cannot open the CA file '" + cfg.ca_file + "'");
        key += cfg.ca_file + "\n" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
               std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec);
    }
    static std::mutex mutex;
    // oldest first. Never destroyed: OpenSSL's own atexit clean-up may run before static destructors would.
    static auto* const cache = new std::vector<std::pair<std::string, std::shared_ptr<ssl::context>>>();
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, ctx] : *cache)
        if (k == key) return ctx;
    auto ctx = make_tls_context(cfg);  // under the lock: concurrent first uses load the file once
    if (cache->size() >= kContextCache) cache->erase(cache->begin());
    cache->emplace_back(std::move(key), ctx);
    return ctx;
}

// Asio's host_name_verification (DNS names with X509_check_host, IP addresses with X509_check_ip_asc), which
// also records why it failed, so that the handshake error can say "hostname mismatch".
class VerifyHost {
public:
    VerifyHost(const std::string& host, bool ip) : check_(host), ip_(ip) {}
    bool operator()(bool preverified, ssl::verify_context& ctx) const {
        if (check_(preverified, ctx)) return true;
        if (preverified)  // the chain is fine: the leaf certificate is not for this host
            X509_STORE_CTX_set_error(ctx.native_handle(),
                                     ip_ ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
        return false;
    }

private:
    ssl::host_name_verification check_;
    bool ip_;
};

}  // namespace

struct Client::Impl {
    // Beast reads at most the buffer's free capacity (and at most 64 KiB) per read_some: without the
    // reserve, a flat_buffer would read bodies 512 bytes at a time.
    explicit Impl(Client& client) : owner(client) {
        buffer.reserve(64 * 1024);
        // a CA bundle is loaded now, so that a bad path fails at construction; the system store on first use
        if (!owner.tls_.ca_file.empty() && owner.tls_.verify) tls_ctx = tls_context(owner.tls_);
    }

    Client& owner;
    net::io_context ioc{1};  // declared first: destroyed last
    tcp::resolver resolver{ioc};
    beast::tcp_stream stream{ioc};          // the http:// connection
    std::shared_ptr<ssl::context> tls_ctx;  // for the first https:// connection (or with a CA file); shared
    std::unique_ptr<TlsStream> tls;         // the https:// connection (a new one for every connection)
    beast::flat_buffer buffer;
    std::string host;  // what the open connection is connected to
    std::uint16_t port = 0;
    bool https = false;  // the open (or last) connection is tls, not stream
    bool open = false;
    mutable std::mutex info_mutex;  // tls_info() may be called from another thread
    std::optional<TlsInfo> info;

    struct ResolveState {
        bool done = false;
        beast::error_code ec;
        tcp::resolver::results_type results;
    };

    tcp::socket& socket() { return https && tls ? beast::get_lowest_layer(*tls).socket() : stream.socket(); }

    // Closes the TCP socket (also under TLS: no close_notify exchange, nothing waits for the server). The TLS
    // stream object itself is replaced only by the next connect(), when no operation can be pending on it.
    void drop() {
        beast::error_code ignored;
        socket().close(ignored);
        buffer.clear();
        open = false;
        owner.connected_.store(false, std::memory_order_relaxed);
    }

    // Closes the socket (and cancels a resolve) so that the pending operation completes. Socket
    // operations complete at once with operation_aborted and are drained here, because their handlers
    // refer to the caller's stack. A resolve cannot be interrupted (getaddrinfo runs on Asio's private
    // thread): it is abandoned instead; its handler only holds a shared_ptr.
    void abort(const bool& done, bool drain) {
        resolver.cancel();
        drop();
        if (!drain) return;
        ioc.restart();
        while (!done) {
            if (ioc.run_one() == 0) break;
        }
    }

    // Runs the io_context until `done`, checking the deadline and the cancel callback between slices.
    void wait(const bool& done, Clock::time_point deadline, const CancelCheck& cancel, Phase phase, bool drain,
              const std::string& where) {
        while (!done) {
            const auto now = Clock::now();
            if (now >= deadline) {
                abort(done, drain);
                throw TimeoutError("request to " + where + " timed out after " + seconds_text(owner.timeout_) +
                                   " (while " + phase_text(phase) + ")");
            }
            const auto until = std::min(deadline, now + owner.poll_interval_);
            if (ioc.stopped()) ioc.restart();
            try {
                while (!done && ioc.run_one_until(until) != 0) {
                }
            } catch (...) {  // thrown by a handler (e.g. bad_alloc while storing the body)
                abort(done, drain);
                throw;
            }
            if (done) return;
            if (ioc.stopped()) {  // out of work although the operation has not completed: a bug
                abort(done, drain);
                throw Error("internal error: no pending operation while " + std::string(phase_text(phase)) + " for " +
                            where);
            }
            if (cancel) {
                bool stop = false;
                try {
                    stop = cancel();
                } catch (...) {
                    abort(done, drain);
                    throw;
                }
                if (stop) {
                    abort(done, drain);
                    throw Cancelled("request to " + where + " cancelled (while " + phase_text(phase) + ")");
                }
            }
        }
    }

    // Whether the idle kept-alive connection can carry a new request: nothing unread is buffered and the
    // server has neither closed nor reset it. One non-blocking MSG_PEEK: EAGAIN = open and quiet; 0 = the
    // server's FIN (e.g. its keep-alive timeout); an error = reset; data = bytes the server sent unasked
    // (e.g. a 408 before closing), which cannot be the response to the next request. Over TLS the peek is on
    // the TCP socket under the TLS layer, where data is a TLS record the server sent unasked: on an idle
    // connection that is its close_notify (or another alert) ahead of its FIN. TLS records already read
    // from the socket but not yet processed (OpenSSL's buffers) count as data too.
    bool reusable() {
        if (buffer.size() != 0) return false;
        if (https) {
            SSL* ssl = tls->native_handle();
            if (SSL_has_pending(ssl) || BIO_ctrl_pending(SSL_get_rbio(ssl)) != 0) return false;
        }
        char c;
        for (;;) {
            const auto n = ::recv(socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
            if (n < 0 && errno == EINTR) continue;
            return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        }
    }

    void set_info(std::optional<TlsInfo> value) {
        std::lock_guard<std::mutex> lock(info_mutex);
        info = std::move(value);
    }

    // Makes sure a connection to u is open (TCP, and for https the TLS handshake); returns true when an
    // existing one is re-used. A kept-alive connection that the server closed while it was idle is replaced
    // here, before anything is sent on it, for every method.
    bool connect(const Url& u, Clock::time_point deadline, const CancelCheck& cancel, const std::string& where) {
        if (open && u.https == https && u.port == port && u.host == host && reusable()) return true;
        drop();
        std::vector<tcp::endpoint> endpoints;
        beast::error_code ec;
        const auto address = net::ip::make_address(u.host, ec);
        const bool is_ip = !ec;
        if (is_ip) {
            endpoints.emplace_back(address, u.port);
        } else {
            auto state = std::make_shared<ResolveState>();
            resolver.async_resolve(u.host, std::to_string(u.port), tcp::resolver::numeric_service,
                                   [state](const beast::error_code& e, tcp::resolver::results_type r) {
                                       state->ec = e;
                                       state->results = std::move(r);
                                       state->done = true;
                                   });
            wait(state->done, deadline, cancel, Phase::resolve, false, where);
            if (state->ec) fail(state->ec, Phase::resolve, where);
            for (const auto& entry : state->results) endpoints.push_back(entry.endpoint());
            if (endpoints.empty()) throw ConnectionError("cannot resolve the host of " + where + ": no addresses");
        }
        if (u.https) {
            if (!tls_ctx) tls_ctx = tls_context(owner.tls_);
            auto fresh = std::make_unique<TlsStream>(ioc, *tls_ctx);
            SSL* ssl = fresh->native_handle();
            // SNI carries host names only (RFC 6066 3)
            if (!is_ip && SSL_set_tlsext_host_name(ssl, u.host.c_str()) != 1) {
                ERR_clear_error();
                throw TLSError("cannot use '" + u.host + "' as the TLS server name (SNI)");
            }
            if (owner.tls_.verify) fresh->set_verify_callback(VerifyHost(u.host, is_ip));
            tls = std::move(fresh);  // the previous connection's: nothing is pending on it (every wait drains)
        } else {
            tls.reset();
        }
        https = u.https;
        beast::tcp_stream& tcp_layer = https ? beast::get_lowest_layer(*tls) : stream;
        bool done = false;
        tcp_layer.async_connect(endpoints, [&](const beast::error_code& e, const tcp::endpoint&) {
            ec = e;
            done = true;
        });
        wait(done, deadline, cancel, Phase::connect, true, where);
        if (ec) {
            drop();
            fail(ec, Phase::connect, where);
        }
        beast::error_code ignored;
        tcp_layer.socket().set_option(tcp::no_delay(true), ignored);
        if (https) {
            done = false;
            tls->async_handshake(ssl::stream_base::client, [&](const beast::error_code& e) {
                ec = e;
                done = true;
            });
            wait(done, deadline, cancel, Phase::handshake, true, where);
            if (ec) {
                const std::string why = handshake_failure(ec, tls->native_handle());
                ERR_clear_error();
                drop();
                throw TLSError("TLS handshake with " + where + " failed: " + why, kind_of(ec));
            }
            SSL* ssl = tls->native_handle();
            set_info(TlsInfo{SSL_get_version(ssl), SSL_get_cipher_name(ssl)});
        } else if (info) {  // (only this thread writes info)
            set_info(std::nullopt);
        }
        buffer.clear();
        host = u.host;
        port = u.port;
        open = true;
        owner.connected_.store(true, std::memory_order_relaxed);
        owner.connections_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }

    // One request/response exchange. connect() has already replaced a kept-alive connection found closed.
    // If the server closes a re-used connection after that check (a race with its idle timeout), the
    // request is sent again once, on a new connection, only when that is harmless: no byte of the response
    // had arrived, and either no byte of the request had been sent or the method is idempotent (a repeat
    // has the effect of one request, RFC 9110 9.2.2).
    // `reader` is (re)created for each attempt; after a failure it holds what was received.
    void roundtrip(const Url& u, http::request<http::string_body>& req, std::optional<ResponseReader>& reader,
                   bool keep, std::uint64_t body_limit, const CancelCheck& cancel) {
        const auto deadline = Clock::now() + owner.timeout_;
        const std::string where = host_port(u.host, u.port);
        for (int attempt = 0;; ++attempt) {
            reader.reset();
            const bool reused = connect(u, deadline, cancel, where);
            const bool may_retry = reused && attempt == 0;
            const bool retry =
                https ? exchange(*tls, req, reader, keep, body_limit, cancel, deadline, where, may_retry)
                      : exchange(stream, req, reader, keep, body_limit, cancel, deadline, where, may_retry);
            if (!retry) return;
        }
    }

    // Sends the request and reads the response on the open connection. Returns true when the request is to
    // be sent again on a new connection (see roundtrip()).
    template <class Stream>
    bool exchange(Stream& s, http::request<http::string_body>& req, std::optional<ResponseReader>& reader, bool keep,
                  std::uint64_t body_limit, const CancelCheck& cancel, Clock::time_point deadline,
                  const std::string& where, bool may_retry) {
        const bool head = req.method() == http::verb::head;
        const bool idempotent = is_idempotent(req.method());
        beast::error_code ec;
        bool done = false;
        std::size_t sent = 0;  // bytes of the request handed to the kernel (to the TLS layer)
        http::async_write(s, req, [&](const beast::error_code& e, std::size_t n) {
            ec = e;
            sent = n;
            done = true;
        });
        wait(done, deadline, cancel, Phase::write, true, where);
        if (ec) {
            drop();
            if (may_retry && is_stale_connection(ec) && (idempotent || sent == 0)) return true;
            fail(ec, Phase::write, where);
        }

        bool interim = false;  // a 1xx interim response was received: the response has started
        for (;;) {
            ResponseReader& parser = reader.emplace(keep, keep);
            parser.header_limit(header_limit);
            parser.body_limit(body_limit);
            if (head) parser.skip(true);
            done = false;
            http::async_read(s, buffer, parser, [&](const beast::error_code& e, std::size_t) {
                ec = e;
                done = true;
            });
            wait(done, deadline, cancel, Phase::read, true, where);
            if (ec == ssl::error::stream_truncated) {
                // the TLS peer closed without close_notify: what Beast does for a TCP EOF (a body delimited
                // by the end of the connection is complete; anything else was cut short)
                if (parser.got_some()) {
                    parser.put_eof(ec);
                    if (!ec) {
                        drop();
                        return false;
                    }
                } else {
                    ec = http::error::end_of_stream;
                }
            }
            if (ec) {
                const bool started = interim || parser.got_some();
                const bool tls_alert_reply = !https && is_http_error(ec) && buffer.size() >= 3 &&
                                             static_cast<const unsigned char*>(buffer.data().data())[0] == 0x15 &&
                                             static_cast<const unsigned char*>(buffer.data().data())[1] == 0x03;
                drop();
                if (may_retry && !started && is_stale_connection(ec)) {
                    if (idempotent) return true;
                    throw ConnectionError("connection to " + where +
                                              " closed by the server before a response was received (" +
                                              str(req.method_string()) +
                                              " is not idempotent: not re-sent, the server may have received it)",
                                          ConnectionError::Kind::reset);
                }
                if (tls_alert_reply)  // an http:// URL to a TLS server, which answered with a TLS alert
                    throw ProtocolError("malformed HTTP response from " + where + ": " + ec.message() +
                                        " (the server answered with a TLS alert: is it an https:// server?)");
                fail(ec, Phase::read, where);
            }
            // 1xx interim responses (100 Continue, 103 Early Hints) have no body: the final one follows
            if (parser.status >= 100 && parser.status < 200 && parser.status != 101) {
                interim = true;
                continue;
            }
            break;
        }
        const ResponseReader& parser = *reader;
        // Connection: close, HTTP/1.0, a body delimited by EOF, or a protocol switch we did not ask for
        if (!parser.keep_alive() || parser.status == 101) drop();
        return false;
    }
};

namespace {

http::request<http::string_body> make_request(std::string_view method, const Url& u, const Headers& headers,
                                              std::string_view body) {
    if (!is_token(method)) throw std::invalid_argument("invalid HTTP method '" + printable(method) + "'");
    http::request<http::string_body> req;
    const auto verb = http::string_to_verb(bsv(method));
    if (verb == http::verb::unknown)
        req.method_string(bsv(method));
    else
        req.method(verb);
    req.target(u.target);
    req.version(11);
    for (const auto& [name, value] : headers) {
        if (!is_token(name)) throw std::invalid_argument("invalid header name '" + printable(name) + "'");
        // RFC 9110 5.5: field values are visible characters, SP, HTAB and obs-text; no other controls
        for (const char ch : value) {
            const auto c = static_cast<unsigned char>(ch);
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                throw std::invalid_argument("invalid value for header '" + name + "' (contains a control character)");
        }
        // the message framing is derived from the body: a caller's framing header would desync it
        if (beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding"))
            throw std::invalid_argument("header '" + name + "' is set by the client from the body; do not pass it");
        req.insert(name, value);
    }
    if (req.find(http::field::host) == req.end())
        req.set(http::field::host, u.port == (u.https ? 443 : 80)
                                       ? (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host)
                                       : host_port(u.host, u.port));
    if (req.find(http::field::user_agent) == req.end())
        req.set(http::field::user_agent, std::string("beast-client/") + version + " " + BOOST_BEAST_VERSION_STRING);
    req.body().assign(body.data(), body.size());
    req.prepare_payload();
    return req;
}

}  // namespace

Client::Client(std::chrono::nanoseconds timeout, std::chrono::nanoseconds poll_interval)
    : Client(timeout, TlsConfig{}, poll_interval) {}

Client::Client(std::chrono::nanoseconds timeout, TlsConfig tls, std::chrono::nanoseconds poll_interval)
    : timeout_(timeout), poll_interval_(poll_interval), tls_(std::move(tls)) {
    if (timeout_.count() <= 0) throw std::invalid_argument("timeout must be > 0");
    if (poll_interval_.count() <= 0) throw std::invalid_argument("poll interval must be > 0");
    const auto ten_years = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::hours(24 * 3653));
    timeout_ = std::min(timeout_, ten_years);
    poll_interval_ = std::min(poll_interval_, ten_years);
    impl_ = std::make_unique<Impl>(*this);
}

Client::~Client() = default;

int Client::get(std::string_view url, const CancelCheck& cancel) {
    Guard guard(busy_);
    last_body_bytes_.store(0, std::memory_order_relaxed);
    const Url u = parse_url(url);
    auto req = make_request("GET", u, {}, {});
    std::optional<ResponseReader> reader;
    try {
        impl_->roundtrip(u, req, reader, false, std::numeric_limits<std::uint64_t>::max(), cancel);
    } catch (...) {
        if (reader) last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
        throw;
    }
    last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
    return reader->status;
}

Response Client::request(std::string_view method, std::string_view url, const Headers& headers, std::string_view body,
                         const CancelCheck& cancel) {
    Guard guard(busy_);
    last_body_bytes_.store(0, std::memory_order_relaxed);
    const Url u = parse_url(url);
    auto req = make_request(method, u, headers, body);
    std::optional<ResponseReader> reader;
    try {
        impl_->roundtrip(u, req, reader, true, request_body_limit, cancel);
    } catch (...) {
        if (reader) last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
        throw;
    }
    last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
    Response out;
    out.status = reader->status;
    out.headers = std::move(reader->headers);
    out.body = std::move(reader->body);
    return out;
}

void Client::close() {
    Guard guard(busy_);
    impl_->drop();
}

std::size_t Client::last_body_bytes() const noexcept { return last_body_bytes_.load(std::memory_order_relaxed); }
std::size_t Client::connections_opened() const noexcept { return connections_.load(std::memory_order_relaxed); }
bool Client::connected() const noexcept { return connected_.load(std::memory_order_relaxed); }

std::optional<TlsInfo> Client::tls_info() const {
    std::lock_guard<std::mutex> lock(impl_->info_mutex);
    return impl_->info;
}

}  // namespace beast_client
