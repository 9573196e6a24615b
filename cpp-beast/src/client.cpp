// The Client's public API (get, request, send, stream, ResponseStream). The library's sources (src/) are the
// only files that include Boost.Beast, Boost.Asio and OpenSSL: the public header includes neither, so that
// code using the client compiles quickly.
#include "beast_client/client.hpp"
#include "client_impl.hpp"
#include "text.hpp"

#include <boost/version.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace beast_client {

using namespace detail;

std::string library_version() {
    return std::to_string(BOOST_VERSION / 100000) + "." + std::to_string(BOOST_VERSION / 100 % 1000) + "." +
           std::to_string(BOOST_VERSION % 100);
}

namespace {

const auto kTenYears = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::hours(24 * 3653));

std::optional<std::chrono::nanoseconds> checked(std::optional<std::chrono::nanoseconds> t, const char* what) {
    if (!t) return t;
    if (t->count() <= 0) throw std::invalid_argument(std::string(what) + " must be > 0");
    return std::min(*t, kTenYears);
}

}  // namespace

Timeouts detail::checked_timeouts(const Timeouts& t) {
    return Timeouts{checked(t.total, "timeout"), checked(t.connect, "connect timeout"),
                    checked(t.read, "read timeout")};
}

Client::Client(std::chrono::nanoseconds timeout, std::chrono::nanoseconds poll_interval)
    : Client(timeout, TlsConfig{}, poll_interval) {}

Client::Client(std::chrono::nanoseconds timeout, TlsConfig tls, std::chrono::nanoseconds poll_interval)
    : Client(Timeouts{timeout, std::nullopt, std::nullopt}, std::move(tls), poll_interval) {}

Client::Client(const Timeouts& timeouts, TlsConfig tls, std::chrono::nanoseconds poll_interval,
               std::size_t max_connections, const ProxyConfig& proxy)
    : poll_interval_(poll_interval), tls_(std::move(tls)), max_connections_(max_connections), proxy_(proxy) {
    timeouts_ = checked_timeouts(timeouts);
    if (poll_interval_.count() <= 0) throw std::invalid_argument("poll interval must be > 0");
    poll_interval_ = std::min(poll_interval_, kTenYears);
    impl_ = std::make_unique<Impl>(*this);
}

Client::~Client() = default;

int Client::get(std::string_view url, const CancelCheck& cancel) {
    std::size_t body_bytes = 0;
    return get(url, body_bytes, cancel);
}

int Client::get(std::string_view url, std::size_t& body_bytes, const CancelCheck& cancel, Phases* phases) {
    body_bytes = 0;
    if (phases) *phases = Phases{};
    const std::shared_ptr<const Target> t = impl_->target(url);  // parsed and built once per URL
    std::optional<ResponseReader> reader;
    Deadline d = impl_->deadline(std::nullopt);
    d.phases = phases;
    const ReadSpec spec;  // nothing kept, no limit
    try {
        impl_->release(impl_->roundtrip(t->u, t->wire, reader, spec, d, cancel, t->where));
    } catch (...) {
        if (reader) body_bytes = static_cast<std::size_t>(reader->body_bytes);
        last_body_bytes_.store(body_bytes, std::memory_order_relaxed);
        throw;
    }
    body_bytes = static_cast<std::size_t>(reader->body_bytes);
    last_body_bytes_.store(body_bytes, std::memory_order_relaxed);
    return reader->status;
}

Response Client::request(std::string_view method, std::string_view url, const Headers& headers, std::string_view body,
                         const CancelCheck& cancel, Phases* phases) {
    if (phases) *phases = Phases{};
    const Url u = parse_url(url);
    const Wire req = make_request(method, u, headers, body, false, u.https ? nullptr : impl_->proxies.for_url(u));
    std::optional<ResponseReader> reader;
    Deadline d = impl_->deadline(std::nullopt);
    d.phases = phases;
    ReadSpec spec;
    spec.keep = true;
    spec.body_limit = request_body_limit;
    try {
        impl_->release(impl_->roundtrip(u, req, reader, spec, d, cancel, host_port(u.host, u.port)));
    } catch (...) {
        last_body_bytes_.store(reader ? static_cast<std::size_t>(reader->body_bytes) : 0, std::memory_order_relaxed);
        throw;
    }
    last_body_bytes_.store(static_cast<std::size_t>(reader->body_bytes), std::memory_order_relaxed);
    Response out;
    out.status = reader->status;
    out.headers = std::move(reader->headers);
    out.body = std::move(reader->body);
    out.reason = std::move(reader->reason);
    if (phases) out.phases = *phases;
    return out;
}

Response Client::send(std::string_view method, std::string_view url, const Headers& headers, std::string_view body,
                      const RequestOptions& options, const CancelCheck& cancel) {
    Active a;
    try {
        impl_->open(a, std::string(method), url, headers, body, options, cancel, false);
        impl_->read_body(a, cancel, false);
    } catch (...) {
        last_body_bytes_.store(a.reader ? static_cast<std::size_t>(a.reader->body_bytes) : 0,
                               std::memory_order_relaxed);
        if (a.conn) {
            impl_->drop(*a.conn);
            impl_->release(std::move(a.conn));
        }
        throw;
    }
    impl_->release(std::move(a.conn));
    ResponseReader& r = *a.reader;
    last_body_bytes_.store(static_cast<std::size_t>(r.body_bytes), std::memory_order_relaxed);
    Response out;
    out.status = r.status;
    out.headers = std::move(r.headers);
    out.body = std::move(r.body);
    out.reason = std::move(r.reason);
    out.url = std::move(a.url);
    if (options.phases) out.phases = a.recorded;
    return out;
}

struct ResponseStream::State {
    Client& owner;
    Active a;
    bool finished = false;
};

std::unique_ptr<ResponseStream> Client::stream(std::string_view method, std::string_view url, const Headers& headers,
                                               std::string_view body, const RequestOptions& options,
                                               const CancelCheck& cancel) {
    last_body_bytes_.store(0, std::memory_order_relaxed);
    auto state = std::make_unique<ResponseStream::State>(ResponseStream::State{*this, {}, false});
    Active& a = state->a;
    try {
        impl_->open(a, std::string(method), url, headers, body, options, cancel, true);
    } catch (...) {
        if (a.conn) {
            impl_->drop(*a.conn);
            impl_->release(std::move(a.conn));
        }
        throw;
    }
    return std::unique_ptr<ResponseStream>(new ResponseStream(std::move(state)));
}

ResponseStream::ResponseStream(std::unique_ptr<State> state) : state_(std::move(state)) {}

ResponseStream::~ResponseStream() { close(); }

int ResponseStream::status() const noexcept { return state_->a.reader->status; }
const std::string& ResponseStream::reason() const noexcept { return state_->a.reader->reason; }
const Headers& ResponseStream::headers() const noexcept { return state_->a.reader->headers; }
const std::string& ResponseStream::url() const noexcept { return state_->a.url; }
bool ResponseStream::done() const noexcept { return state_->finished; }
std::optional<Phases> ResponseStream::phases() const {
    if (!state_->a.deadline.phases) return std::nullopt;
    return state_->a.recorded;
}

bool ResponseStream::next(std::string& chunk, const CancelCheck& cancel) {
    State& st = *state_;
    if (st.finished) return false;
    Client::Impl& impl = *st.owner.impl_;
    ResponseReader& r = *st.a.reader;
    for (;;) {
        if (!r.body.empty()) {
            chunk.clear();
            chunk.swap(r.body);
            st.owner.last_body_bytes_.store(static_cast<std::size_t>(r.body_bytes), std::memory_order_relaxed);
            return true;
        }
        if (r.is_done() && !r.pending()) {
            st.finished = true;
            impl.release(std::move(st.a.conn));
            return false;
        }
        try {
            if (r.pending())  // what the decoder held back comes before anything more is read
                impl.drain(st.a);
            else
                impl.read_body(st.a, cancel, true);
        } catch (...) {
            st.finished = true;
            st.owner.last_body_bytes_.store(static_cast<std::size_t>(r.body_bytes), std::memory_order_relaxed);
            impl.drop(*st.a.conn);
            impl.release(std::move(st.a.conn));
            throw;
        }
    }
}

void ResponseStream::close() {
    State& st = *state_;
    if (!st.a.conn) {
        st.finished = true;
        return;
    }
    Client::Impl& impl = *st.owner.impl_;
    // the body was read to its end (or there is none): the connection can carry the next request
    if (!(st.a.reader && st.a.reader->is_done())) impl.drop(*st.a.conn);
    st.finished = true;
    impl.release(std::move(st.a.conn));
}

void Client::close() { impl_->close_all(); }

std::size_t Client::last_body_bytes() const noexcept { return last_body_bytes_.load(std::memory_order_relaxed); }
std::size_t Client::connections_opened() const noexcept { return connections_.load(std::memory_order_relaxed); }
bool Client::connected() const noexcept { return impl_->open_connections.load(std::memory_order_relaxed) > 0; }

std::optional<TlsInfo> Client::tls_info() const {
    std::lock_guard<std::mutex> lock(impl_->info_mutex);
    return impl_->info;
}

}  // namespace beast_client
