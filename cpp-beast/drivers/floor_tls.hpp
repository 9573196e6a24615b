// floor-driver's TLS settings (floor_driver.cpp): one SSL_CTX per process, OpenSSL used directly.
#pragma once

#include "beast_client/client.hpp"  // TLSError
#include "harness.hpp"              // ClientOptions
#include "trust_store.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace floor_tls {

using beast_client::TLSError;

// OpenSSL's text for the oldest error in this thread's queue (which is then emptied).
inline std::string openssl_error(const char* fallback) {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0) return fallback;
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return buf;
}

using SslCtx = std::shared_ptr<SSL_CTX>;

// The TLS client settings: TLS 1.2-1.3, and what to trust.
inline SslCtx make_ssl_ctx(const harness::ClientOptions& o) {
    SslCtx ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
    if (!ctx) throw TLSError("cannot create a TLS context: " + openssl_error("out of memory"));
    SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
    SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);  // a close without close_notify is an EOF
#endif
    if (o.insecure) {
        SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
        return ctx;
    }
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (o.ca_file.empty()) {
        X509_STORE* store = beast_client::detail::system_trust_store();  // shared with the Beast client
        if (!store) throw TLSError("cannot load the system's trust store");
        SSL_CTX_set1_cert_store(ctx.get(), store);
    } else {
        if (std::FILE* f = std::fopen(o.ca_file.c_str(), "r"))
            std::fclose(f);
        else
            throw std::system_error(errno, std::generic_category(), "cannot open the CA file '" + o.ca_file + "'");
        if (SSL_CTX_load_verify_locations(ctx.get(), o.ca_file.c_str(), nullptr) != 1)
            throw std::invalid_argument("the CA file '" + o.ca_file + "' holds no usable PEM certificate (" +
                                        openssl_error("unknown error") + ")");
    }
    return ctx;
}

// One SSL_CTX per process for all FloorClients (they all have the driver's options): creating one costs
// ~0.5 ms with OpenSSL 3, which --connection new would otherwise pay per request. SSL_new() on a shared SSL_CTX
// is thread-safe.
inline SslCtx shared_ssl_ctx(const harness::ClientOptions& o) {
    static std::mutex mutex;
    // never destroyed: OpenSSL's own atexit clean-up may run before static destructors would
    static auto* const made = new std::vector<std::pair<std::string, SslCtx>>();
    const std::string key = (o.insecure ? "insecure\n" : "verify\n") + o.ca_file;
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, ctx] : *made)
        if (k == key) return ctx;
    SslCtx ctx = make_ssl_ctx(o);
    made->emplace_back(key, ctx);
    return ctx;
}

}  // namespace floor_tls
