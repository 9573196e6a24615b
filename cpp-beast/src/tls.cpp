#include "tls.hpp"

#include "session.hpp"
#include "trust_store.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

#include <openssl/err.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

namespace beast_client::detail {

namespace {

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

std::shared_ptr<ssl::context> make_tls_context(const TlsConfig& cfg) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    SSL_CTX* handle = ctx->native_handle();
    SSL_CTX_set_min_proto_version(handle, TLS1_2_VERSION);
    SSL_CTX_set_max_proto_version(handle, 0);  // the highest OpenSSL has: TLS 1.3
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
    enable_client_sessions(handle);  // each client's connections resume their origin's session (session.hpp)
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

// At most this many contexts are kept (the oldest goes first; Clients keep theirs alive).
constexpr std::size_t kContextCache = 8;

}  // namespace

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

}  // namespace beast_client::detail
