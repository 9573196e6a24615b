// LoopConnection (beast_client/loop_connection.hpp): one request at a time on a socket the caller's event loop
// watches. Each step is one system call (send(), or recv() and Boost.Beast's parser over what it brought), so a
// keep-alive request costs a send() and a recv() on top of the loop's own wait. The decisions are the Client's
// (exchange.cpp): what a failed write or read means, the one retry on a re-used connection, keep-alive.
#include "beast_client/loop_connection.hpp"

#include "client_impl.hpp"

#include <boost/beast/core/read_size.hpp>

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <utility>

namespace beast_client {

using namespace detail;

struct LoopConnection::Impl {
    Impl(int socket, const LoopRequest& origin) : fd(socket), host(origin.url.host), port(origin.url.port) {
        buffer.reserve(64 * 1024);  // Beast reads at most the free capacity per read (see Connection)
    }

    int fd;
    std::string host;
    std::uint16_t port;
    beast::flat_buffer buffer;
    bool open = true;
    bool busy = false;
    Clock::time_point idle_since = Clock::now();

    // the request in progress
    std::string where;
    std::string method;
    bool idempotent = false;
    bool head_method = false;
    bool keep_body = false;
    bool may_retry = false;
    bool interim = false;  // a 1xx came: the response has started
    bool broken = false;   // the request could not be written whole: closed after its answer
    beast::error_code write_error;
    std::string unsent;         // what a partial write left of the request
    std::size_t unsent_at = 0;  // how much of it has gone since
    bool wrote_some = false;    // a byte of the request went out
    Phases recorded;            // start()'s record_phases: d.phases points here
    bool first_bytes = false;   // recording: the response's first bytes are still to come
    std::optional<ResponseReader> reader;
    Deadline d;
    Phase phase = Phase::write;
    int status = 0;
    std::uint64_t body_bytes = 0;
    std::string body;
    std::exception_ptr error;

    Step fail_with(std::exception_ptr e) {
        error = std::move(e);
        open = false;
        busy = false;
        return Step::failed;
    }
    template <class E>
    Step fail_now(E&& e) {
        return fail_with(std::make_exception_ptr(std::forward<E>(e)));
    }
    Step retry() {
        open = false;
        busy = false;
        return Step::retry;
    }

    void new_reader() {
        ResponseReader& parser = reader.emplace(false, keep_body);
        parser.eager(true);
        parser.header_limit(header_limit);
        parser.body_limit(keep_body ? request_body_limit : std::numeric_limits<std::uint64_t>::max());
        if (head_method) parser.skip(true);
        if (d.read_limit.count() > 0) parser.progress = &d.progress;
    }

    Step start_read() {
        if (d.phases && phase == Phase::write) {
            d.add_phase(&Phases::send);
            first_bytes = buffer.size() == 0;
            if (!first_bytes) d.add_phase(&Phases::wait);
        }
        phase = Phase::read;
        d.start_read();
        new_reader();
        return buffer.size() != 0 ? parse() : Step::read;  // (bytes a previous answer left: none from a sane server)
    }

    // After a write (`err`: its errno, 0 when it wrote): the rest of the request for writable(), the response
    // when it is all sent, or what the error means.
    Step wrote(bool all, int err) {
        if (err == 0 && all) {
            unsent.clear();
            return start_read();
        }
        if (err == 0 || err == EAGAIN || err == EWOULDBLOCK) return Step::write;
        const beast::error_code ec(err, beast::system_category());
        if (may_retry && !wrote_some && is_stale_connection(ec))
            return retry();  // found closed before a byte went out: it cannot have reached the server
        if (!is_stale_connection(ec)) return fail_ec(ec, Phase::write);
        write_error = ec;  // the server closed or reset the connection: its answer may have come first
        broken = true;
        unsent.clear();
        return start_read();
    }

    Step fail_ec(const beast::error_code& ec, Phase p) {
        try {
            fail(ec, p, where);
        } catch (...) {
            return fail_with(std::current_exception());
        }
        return Step::failed;  // (fail() always throws)
    }

    // No answer came after a write the server cut short: what the failed write means.
    Step write_failed() {
        if (may_retry) {
            if (idempotent) return retry();
            return fail_now(ConnectionError("connection to " + where +
                                                " closed by the server as the request was sent (" + method +
                                                " is not idempotent: not re-sent, the server may have received it)",
                                            ConnectionError::Kind::reset));
        }
        return fail_ec(write_error, Phase::write);
    }

    Step read_failed(const beast::error_code& ec) {
        ResponseReader& parser = *reader;
        if (write_error && !interim && !parser.got_some()) return write_failed();
        if (may_retry && !interim && !parser.got_some() && is_stale_connection(ec)) {
            if (idempotent) return retry();
            return fail_now(ConnectionError("connection to " + where +
                                                " closed by the server before a response was received (" + method +
                                                " is not idempotent: not re-sent, the server may have received it)",
                                            ConnectionError::Kind::reset));
        }
        const bool tls_alert = tls_alert_reply(ec, buffer);
        try {
            throw_read_error(parser, ec, where, tls_alert);
        } catch (...) {
            return fail_with(std::current_exception());
        }
    }

    // Beast's parser over what the buffer holds (as http::read_some does it), to the end of the response.
    Step parse() {
        for (;;) {
            ResponseReader& parser = *reader;
            beast::error_code ec;
            while (buffer.size() != 0 && !parser.is_done()) {
                const std::size_t used = parser.put(buffer.data(), ec);
                buffer.consume(used);
                if (ec == http::error::need_more) {
                    ec = {};
                    break;
                }
                if (ec) return read_failed(ec);
            }
            if (!parser.is_done()) return Step::read;
            // 1xx interim responses (100 Continue, 103 Early Hints) have no body: the final one follows
            if (parser.status >= 100 && parser.status < 200 && parser.status != 101) {
                interim = true;
                new_reader();
                continue;
            }
            return finished();
        }
    }

    Step finished() {
        if (d.phases) d.add_phase(&Phases::receive);
        ResponseReader& parser = *reader;
        status = parser.status;
        body_bytes = parser.body_bytes;
        if (keep_body) body = std::move(parser.body);
        if (!parser.keep_alive() || parser.status == 101 || broken) open = false;
        reader.reset();
        busy = false;
        d.reading = false;
        idle_since = Clock::now();
        return Step::done;
    }

    Step eof() {
        ResponseReader& parser = *reader;
        beast::error_code ec;
        if (parser.got_some())
            parser.put_eof(ec);  // a body delimited by the connection's end is complete; anything else was cut
        else
            ec = http::error::end_of_stream;
        if (ec) return read_failed(ec);
        open = false;
        return finished();
    }
};

LoopConnection::LoopConnection(int fd, const LoopRequest& origin) : impl_(std::make_unique<Impl>(fd, origin)) {}

LoopConnection::~LoopConnection() {
    if (impl_->fd >= 0) ::close(impl_->fd);
}

int LoopConnection::fd() const noexcept { return impl_->fd; }
bool LoopConnection::matches(const Url& u) const noexcept { return u.port == impl_->port && u.host == impl_->host; }
bool LoopConnection::busy() const noexcept { return impl_->busy; }
bool LoopConnection::open() const noexcept { return impl_->open; }
LoopConnection::Clock::time_point LoopConnection::idle_since() const noexcept { return impl_->idle_since; }
int LoopConnection::status() const noexcept { return impl_->status; }
std::uint64_t LoopConnection::body_bytes() const noexcept { return impl_->body_bytes; }
std::string& LoopConnection::body() noexcept { return impl_->body; }
std::exception_ptr LoopConnection::error() const noexcept { return impl_->error; }
std::optional<Phases> LoopConnection::phases() const {
    if (!impl_->d.phases) return std::nullopt;
    return impl_->recorded;
}

void LoopConnection::close() noexcept {
    impl_->open = false;
    impl_->busy = false;
}

bool LoopConnection::usable(bool idempotent) {
    Impl& c = *impl_;
    if (!c.open) return false;
    if (c.buffer.size() != 0 || (check_idle(Clock::now(), c.idle_since, idempotent) && !idle_readable())) {
        c.open = false;
        return false;
    }
    return true;
}

bool LoopConnection::idle_readable() {
    Impl& c = *impl_;
    if (!c.open) return false;
    char ch;
    for (;;) {
        const auto n = ::recv(c.fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;  // nothing there: still idle
        c.open = false;  // closed (0), reset (an error) or bytes nobody asked for
        return false;
    }
}

LoopConnection::Step LoopConnection::start(const LoopRequest& r, std::string_view body, bool keep_body,
                                           const Timeouts& timeouts, Clock::time_point start, bool may_retry,
                                           bool record_phases) {
    Impl& c = *impl_;
    c.busy = true;
    c.where = r.where;
    c.method = r.method;
    c.idempotent = r.idempotent;
    c.head_method = r.head_method;
    c.keep_body = keep_body;
    c.may_retry = may_retry;
    c.interim = c.broken = false;
    c.write_error = {};
    c.status = 0;
    c.body_bytes = 0;
    c.body.clear();
    c.error = nullptr;
    c.d = Deadline{};
    c.d.start = start;
    if (timeouts.total) {
        c.d.total_limit = *timeouts.total;
        c.d.total = start + *timeouts.total;
    }
    if (timeouts.read) c.d.read_limit = *timeouts.read;
    c.first_bytes = false;
    if (record_phases) {
        c.recorded = Phases{};
        c.d.phases = &c.recorded;
        c.d.mark = Clock::now();
    }
    c.phase = Phase::write;
    c.unsent.clear();
    c.unsent_at = 0;
    const std::size_t total = r.head.size() + body.size();
    iovec parts[2] = {{const_cast<char*>(r.head.data()), r.head.size()}, {const_cast<char*>(body.data()), body.size()}};
    msghdr msg{};
    msg.msg_iov = parts;
    msg.msg_iovlen = body.empty() ? 1 : 2;
    ssize_t n;
    do {
        n = body.empty() ? ::send(c.fd, r.head.data(), r.head.size(), MSG_NOSIGNAL | MSG_DONTWAIT)
                         : ::sendmsg(c.fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    const std::size_t sent = n > 0 ? static_cast<std::size_t>(n) : 0;
    c.wrote_some = sent > 0;
    if (sent < total && (n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK)) {
        // the rest waits for writable(): copied, as the caller's body need not outlive this call
        c.unsent.reserve(total - sent);
        if (sent < r.head.size()) c.unsent.append(r.head, sent, std::string::npos);
        const std::size_t from_body = sent > r.head.size() ? sent - r.head.size() : 0;
        c.unsent.append(body.data() + from_body, body.size() - from_body);
        return Step::write;
    }
    return c.wrote(sent == total, n < 0 ? errno : 0);
}

LoopConnection::Step LoopConnection::writable() {
    Impl& c = *impl_;
    if (!c.busy) return Step::failed;
    if (c.phase != Phase::write) return Step::read;
    ssize_t n;
    do {
        n = ::send(c.fd, c.unsent.data() + c.unsent_at, c.unsent.size() - c.unsent_at, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return c.wrote(false, errno);
    c.unsent_at += static_cast<std::size_t>(n);
    c.wrote_some = c.wrote_some || n > 0;
    return c.wrote(c.unsent_at >= c.unsent.size(), 0);
}

LoopConnection::Step LoopConnection::readable() {
    Impl& c = *impl_;
    if (!c.busy) return Step::failed;
    if (c.phase == Phase::write) {
        // the server answers before it has the whole request (a 413 to a body it does not want, RFC 9112 9.5):
        // the rest is not sent, the answer is the response, and the connection closes after it
        c.broken = true;
        c.unsent.clear();
        c.start_read();
    }
    const auto space = c.buffer.prepare(beast::read_size(c.buffer, 64 * 1024));
    ssize_t n;
    do {
        n = ::recv(c.fd, space.data(), space.size(), MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return Step::read;
        return c.read_failed(beast::error_code(errno, beast::system_category()));
    }
    if (n == 0) return c.eof();
    c.buffer.commit(static_cast<std::size_t>(n));
    if (c.first_bytes) {
        c.first_bytes = false;
        c.d.add_phase(&Phases::wait);
    }
    return c.parse();
}

LoopConnection::Step LoopConnection::expire(Clock::time_point now) {
    Impl& c = *impl_;
    if (!c.busy) return Step::done;
    if (now < c.d.at()) return c.phase == Phase::write ? Step::write : Step::read;
    return c.fail_now(TimeoutError(timeout_text(c.d, now, c.phase, c.where)));
}

LoopConnection::Clock::time_point LoopConnection::deadline() const noexcept {
    return impl_->busy ? impl_->d.at() : Deadline::never;
}

}  // namespace beast_client
