#include "session.hpp"

#include <openssl/err.h>

#include <utility>

namespace beast_client::detail {

namespace {

// TLS 1.3 tickets kept per origin at most (rustls's client cache keeps 8 per server too): enough for as many
// connections opened at once to resume.
constexpr std::size_t kTickets = 8;

// What a connection's SSL carries (its ex_data): where its new sessions go. Freed with the SSL.
struct Slot {
    std::shared_ptr<SessionCache> cache;
    std::string key;
};

void free_slot(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) { delete static_cast<Slot*>(ptr); }

int slot_index() {
    static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, free_slot);
    return index;
}

// Keeps a copy: OpenSSL marks a connection's own session not resumable when the connection ends without a
// close_notify (ours never wait for one; RFC 5246 no longer asks that such a session be forgotten), and the
// copy is out of its reach.
int on_new_session(SSL* ssl, SSL_SESSION* session) {
    auto* slot = static_cast<Slot*>(SSL_get_ex_data(ssl, slot_index()));
    if (!slot) return 0;
    if (SSL_SESSION* copy = SSL_SESSION_dup(session)) slot->cache->put(slot->key, copy);
    return 0;  // the original stays OpenSSL's
}

bool tls13(const SSL_SESSION* s) { return SSL_SESSION_get_protocol_version(s) == TLS1_3_VERSION; }

}  // namespace

SessionCache::~SessionCache() {
    for (auto& [key, list] : sessions_)
        for (SSL_SESSION* s : list) SSL_SESSION_free(s);
}

SSL_SESSION* SessionCache::take(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = sessions_.find(key);
    if (it == sessions_.end()) return nullptr;
    auto& list = it->second;
    while (!list.empty()) {
        SSL_SESSION* s = list.back();
        if (!SSL_SESSION_is_resumable(s)) {
            list.pop_back();
            SSL_SESSION_free(s);
            continue;
        }
        if (tls13(s)) {
            list.pop_back();  // a ticket is used once
            return s;
        }
        // a TLS 1.2 session serves every later connection: each gets a copy (see on_new_session)
        if (SSL_SESSION* copy = SSL_SESSION_dup(s)) return copy;
        return nullptr;
    }
    return nullptr;
}

void SessionCache::put(const std::string& key, SSL_SESSION* session) {
    std::deque<SSL_SESSION*> dropped;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto& list = sessions_[key];
        if (!tls13(session)) {  // the newest TLS 1.2 session replaces whatever was kept
            dropped.swap(list);
        } else if (list.size() >= kTickets) {
            dropped.push_back(list.front());
            list.pop_front();
        }
        list.push_back(session);
    }
    for (SSL_SESSION* s : dropped) SSL_SESSION_free(s);
}

std::size_t SessionCache::size(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = sessions_.find(key);
    return it == sessions_.end() ? 0 : it->second.size();
}

void enable_client_sessions(SSL_CTX* ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
}

void offer_session(SSL* ssl, const std::shared_ptr<SessionCache>& cache, const std::string& key) {
    if (!cache) return;
    auto slot = std::make_unique<Slot>(Slot{cache, key});
    if (SSL_set_ex_data(ssl, slot_index(), slot.get()) == 1) (void)slot.release();  // freed with the SSL
    if (SSL_SESSION* s = cache->take(key)) {
        if (SSL_set_session(ssl, s) != 1) ERR_clear_error();  // a full handshake then
        SSL_SESSION_free(s);
    }
}

}  // namespace beast_client::detail
