// TLS session resumption: each client keeps the sessions its connections got, per origin (host:port), and offers
// one to the server on its next connection there (SSL_set_session), so that the handshake is abbreviated. A
// session is a TLS 1.2 session (its ID or ticket, kept and offered again) or a TLS 1.3 ticket (offered once:
// RFC 8446 C.4; the server sends new ones on every connection). The SSL_CTX, shared by the clients of a
// process (tls.cpp), has no internal store: a session never crosses from one client to another, as with reqwest's
// per-client cache.
#pragma once

#include <openssl/ssl.h>

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace beast_client::detail {

class SessionCache {
public:
    SessionCache() = default;
    SessionCache(const SessionCache&) = delete;
    SessionCache& operator=(const SessionCache&) = delete;
    ~SessionCache();

    // A session for `key` (owned by the caller), or null.
    SSL_SESSION* take(const std::string& key);
    // Keeps `session` (taking ownership) for `key`.
    void put(const std::string& key, SSL_SESSION* session);
    std::size_t size(const std::string& key);

private:
    std::mutex mutex_;
    std::unordered_map<std::string, std::deque<SSL_SESSION*>> sessions_;  // the newest last
};

// Sets up `ctx` for client-side sessions: the callback that stores each new session in the cache of the
// connection it came on (see offer_session), no store of OpenSSL's own.
void enable_client_sessions(SSL_CTX* ctx);

// Before the handshake of `ssl` to `key`: offers a session of `cache`, and routes the sessions the server sends
// on this connection (TLS 1.2: during the handshake; TLS 1.3: its tickets, read with the first response) to
// `cache`. The cache stays alive as long as `ssl` does.
void offer_session(SSL* ssl, const std::shared_ptr<SessionCache>& cache, const std::string& key);

}  // namespace beast_client::detail
