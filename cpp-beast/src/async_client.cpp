// The AsyncClient's public side (the IoThread, the API, AsyncResponseStream) and its pool, which lives on the
// IoThread: checkout() / release() as the Client's, with a queue per origin instead of a condition variable.
#include "async_exchange.hpp"

#include "text.hpp"
#include "tls.hpp"

#include <boost/version.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace beast_client {

using namespace detail;

// ---- IoThread --------------------------------------------------------------------------------------------

IoThread::IoThread() : impl_(std::make_unique<Impl>()) {
    impl_->thread = std::thread([io = impl_.get()] {
        for (;;) {
            try {
                io->ioc.run();
                return;
            } catch (...) {  // no handler of ours throws; whatever did, the thread carries on
            }
        }
    });
}

IoThread::~IoThread() { stop(); }

void IoThread::stop() {
    std::lock_guard<std::mutex> lock(impl_->stopping);
    impl_->stopped.store(true);
    impl_->work.reset();
    impl_->ioc.stop();
    if (!impl_->thread.joinable()) return;
    if (impl_->thread.get_id() == std::this_thread::get_id())
        impl_->thread.detach();  // from a callback: the thread ends when it returns
    else
        impl_->thread.join();
}

bool IoThread::stopped() const noexcept { return impl_->stopped.load(); }

// ---- the client's state and its pool -----------------------------------------------------------------------

AsyncClient::Impl::Impl(IoThread::Impl& io_thread, const Timeouts& t, TlsConfig tls_config, std::size_t max,
                        const ProxyConfig& proxy)
    : io(io_thread), timeouts(checked_timeouts(t)), tls(std::move(tls_config)), max_connections(max), proxies(proxy) {
    // a CA bundle is loaded now, so that a bad path fails at construction; the system store on first use
    if (!tls.ca_file.empty() && tls.verify) tls_ctx = detail::tls_context(tls);
}

Deadline AsyncClient::Impl::deadline(std::optional<std::chrono::nanoseconds> total_override) const {
    Deadline d;
    const auto total = total_override ? total_override : timeouts.total;
    d.start = Clock::now();
    if (total) {
        d.total_limit = *total;
        d.total = d.start + *total;
    }
    if (timeouts.connect) d.connect_limit = *timeouts.connect;
    if (timeouts.read) d.read_limit = *timeouts.read;
    return d;
}

ssl::context& AsyncClient::Impl::tls_context() {
    if (!tls_ctx) tls_ctx = detail::tls_context(tls);
    return *tls_ctx;
}

void AsyncClient::Impl::set_info(std::optional<TlsInfo> value) {
    std::lock_guard<std::mutex> lock(info_mutex);
    info = std::move(value);
}

std::unique_ptr<AsyncConn> AsyncClient::Impl::checkout(const Url& u, const std::shared_ptr<Exchange>& x,
                                                       AsyncOrigin*& origin) {
    AsyncOrigin* o = nullptr;
    for (auto& known : origins)
        if (known->matches(u)) o = known.get();
    if (!o) {
        if (origins.size() >= 4 * Client::pool_size)  // forget the records nobody counts or waits for
            origins.erase(std::remove_if(origins.begin(), origins.end(),
                                         [](const auto& r) { return r->counted == 0 && r->waiting.empty(); }),
                          origins.end());
        origins.push_back(std::make_unique<AsyncOrigin>());
        o = origins.back().get();
        o->host = u.host;
        o->port = u.port;
        o->https = u.https;
    }
    origin = o;
    if (!o->idle.empty()) {
        auto c = std::move(o->idle.back());
        o->idle.pop_back();
        return c;
    }
    if (max_connections == 0 || o->counted < max_connections) {
        ++o->counted;
        auto c = std::make_unique<AsyncConn>(io.ioc);
        c->origin = o;
        return c;
    }
    o->waiting.push_back(x);
    return nullptr;
}

// A connection back from a request: to the first request waiting for its origin (an open one as it is, a
// closed one as the slot for a new connection), else an open one to the idle ones (those of the least recently
// used origin closed beyond pool_size origins, as the Client's), a closed one freeing its slot.
void AsyncClient::Impl::release(std::unique_ptr<AsyncConn> c) {
    if (!c || !c->origin) return;  // (connect()'s: never in the pool, closed with the object)
    AsyncOrigin& o = *c->origin;
    if (c->open && c->generation != generation) {  // opened before a close()
        c->open = false;
        c->close();
    }
    if (c->open) c->idle_since = Clock::now();
    if (!o.waiting.empty()) {
        auto x = std::move(o.waiting.front());
        o.waiting.pop_front();
        x->set_handing();
        auto handed = std::make_shared<std::unique_ptr<AsyncConn>>(std::move(c));
        net::post(io.ioc, [x, handed] { x->resume(std::move(*handed)); });
        return;
    }
    if (!c->open) {
        --o.counted;
        return;
    }
    const bool first = o.idle.empty();
    o.used = ++tick;
    o.idle.push_back(std::move(c));
    if (!first) return;
    std::size_t holding = 0;
    AsyncOrigin* oldest = nullptr;
    for (auto& other : origins) {
        if (other->idle.empty()) continue;
        ++holding;
        if (!oldest || other->used < oldest->used) oldest = other.get();
    }
    if (holding > Client::pool_size) {
        oldest->counted -= oldest->idle.size();
        for (auto& idle : oldest->idle) idle->close();
        oldest->idle.clear();
    }
}

void AsyncClient::Impl::forget_waiter(AsyncOrigin& o, Exchange& x) {
    o.waiting.remove_if([&](const std::shared_ptr<Exchange>& w) { return w.get() == &x; });
}

void AsyncClient::Impl::close_all() {
    ++generation;
    for (auto& o : origins) {
        o->counted -= o->idle.size();
        for (auto& idle : o->idle) idle->close();
        o->idle.clear();
    }
}

// ---- AsyncClient ----------------------------------------------------------------------------------------

AsyncClient::AsyncClient(IoThread& io, const Timeouts& timeouts, TlsConfig tls, std::size_t max_connections,
                         const ProxyConfig& proxy)
    : impl_(std::make_shared<Impl>(io.impl(), timeouts, std::move(tls), max_connections, proxy)) {}

AsyncClient::~AsyncClient() {
    try {  // the last reference goes with the posted work: the pool is closed on its own thread
        impl_->io.post([impl = std::move(impl_)] { impl->close_all(); });
    } catch (const std::runtime_error&) {  // the IoThread is stopped: nothing runs there any more
    }
}

namespace {

// get()'s and request()'s exchange: the request as it is (its route: the proxy of an http:// URL)
std::shared_ptr<Exchange> plain_exchange(const std::shared_ptr<AsyncClient::Impl>& impl, Exchange::Kind kind,
                                         std::string_view method, std::string_view url, const Headers& headers,
                                         std::string_view body) {
    auto x = std::make_shared<Exchange>(impl, kind);
    x->u = parse_url(url);
    x->where = host_port(x->u.host, x->u.port);
    x->wire = make_request(method, x->u, headers, body, false, x->u.https ? nullptr : impl->proxies.for_url(x->u));
    return x;
}

// send()'s and stream()'s: the plan, its first hop's request made now (a bad header fails here)
std::shared_ptr<Exchange> planned_exchange(const std::shared_ptr<AsyncClient::Impl>& impl, Exchange::Kind kind,
                                           std::string_view method, std::string_view url, Headers headers,
                                           std::string body, const RequestOptions& o,
                                           std::shared_ptr<AsyncBodySource> upload) {
    if (o.upload)
        throw std::invalid_argument(
            "an AsyncClient request streams its body from an AsyncBodySource, not "
            "RequestOptions::upload");
    auto x = std::make_shared<Exchange>(impl, kind);
    x->plan.emplace(std::string(method), url, std::move(headers), body, o, bool(upload));
    x->upload = std::move(upload);
    x->wire = x->plan->wire(impl->proxies);
    x->prewired = true;
    x->total_override = o.timeout;
    x->spec.keep = true;
    x->spec.decompress = o.decompress;
    x->spec.header_only = true;
    return x;
}

}  // namespace

AsyncHandle AsyncClient::get(std::string_view url, FetchCallback done, bool phases) {
    auto x = plain_exchange(impl_, Exchange::Kind::fetch, "GET", url, {}, {});
    x->on_fetch = std::move(done);  // nothing kept, no limit
    x->record_phases = phases;
    x->start();
    return x;
}

AsyncHandle AsyncClient::request(std::string_view method, std::string_view url, const Headers& headers,
                                 std::string body, ResponseCallback done) {
    auto x = plain_exchange(impl_, Exchange::Kind::response, method, url, headers, body);
    x->spec.keep = true;
    x->spec.body_limit = request_body_limit;
    x->on_response = std::move(done);
    x->start();
    return x;
}

AsyncHandle AsyncClient::send(std::string_view method, std::string_view url, Headers headers, std::string body,
                              const RequestOptions& options, ResponseCallback done,
                              std::shared_ptr<AsyncBodySource> upload) {
    auto x = planned_exchange(impl_, Exchange::Kind::response, method, url, std::move(headers), std::move(body),
                              options, std::move(upload));
    x->spec.body_limit = request_body_limit;
    if (options.max_body_size) x->spec.kept_limit = std::min(request_body_limit, *options.max_body_size);
    x->record_phases = options.phases;
    x->on_response = std::move(done);
    x->start();
    return x;
}

AsyncHandle AsyncClient::stream(std::string_view method, std::string_view url, Headers headers, std::string body,
                                const RequestOptions& options, StreamCallback done,
                                std::shared_ptr<AsyncBodySource> upload) {
    auto x = planned_exchange(impl_, Exchange::Kind::stream, method, url, std::move(headers), std::move(body), options,
                              std::move(upload));
    x->spec.chunk_limit = 64 * 1024;  // pieces of about this much, decoded
    x->on_stream = std::move(done);
    x->start();
    return x;
}

std::optional<LoopRequest> AsyncClient::loop_request(std::string_view method, std::string_view url,
                                                     std::uint64_t body_length) const {
    Url u = parse_url(url);
    Wire w = make_request_head(method, u, body_length);  // (a bad method throws, whatever the URL)
#if BOOST_VERSION < 107500                               // no socket::release(): connect() cannot hand a socket over
    return std::nullopt;
#endif
    if (u.https || impl_->proxies.for_url(u)) return std::nullopt;
    LoopRequest r;
    r.where = host_port(u.host, u.port);
    r.url = std::move(u);
    r.head = std::move(w.bytes);
    r.method = std::move(w.method);
    r.body_length = body_length;
    r.idempotent = w.idempotent;
    r.head_method = w.head;
    return r;
}

AsyncHandle AsyncClient::connect(const LoopRequest& r, SocketCallback done) {
    auto x = std::make_shared<Exchange>(impl_, Exchange::Kind::connect);
    x->u = r.url;
    x->where = r.where;
    x->on_socket = std::move(done);
    x->start();
    return x;
}

AsyncHandle AsyncClient::connect_recording(const LoopRequest& r, ConnectCallback done) {
    auto x = std::make_shared<Exchange>(impl_, Exchange::Kind::connect);
    x->u = r.url;
    x->where = r.where;
    x->on_connected_phases = std::move(done);
    x->record_phases = true;
    x->start();
    return x;
}

void AsyncClient::close() {
    try {
        impl_->io.post([impl = impl_] { impl->close_all(); });
    } catch (const std::runtime_error&) {
    }
}

std::optional<TlsInfo> AsyncClient::tls_info() const {
    std::lock_guard<std::mutex> lock(impl_->info_mutex);
    return impl_->info;
}

std::size_t AsyncClient::connections_opened() const noexcept { return impl_->opened.load(); }
const Timeouts& AsyncClient::timeouts() const noexcept { return impl_->timeouts; }
std::size_t AsyncClient::max_connections() const noexcept { return impl_->max_connections; }

}  // namespace beast_client
