// How one exchange moves its bytes: over http:// the calling thread sends and receives on the connected
// socket itself (BlockingIo), over https:// the TLS stream's asynchronous operations run on the Client's
// io_context (AsyncIo). exchange() and read_body() (exchange.cpp) are written once against either.
#pragma once

#include "client_impl.hpp"
#include "text.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/read.hpp>

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

namespace beast_client {

// What a gathering write takes: a streamed body's chunk (its size line, the piece, CRLF), the first with the head.
constexpr std::size_t kMostParts = 4;
using Parts = std::initializer_list<std::string_view>;

// Plain http on a blocking socket: one send() and one recv() per request when the response is small, no
// io_context round and no poll. The socket's own timeouts (SO_SNDTIMEO / SO_RCVTIMEO, at most the poll
// interval and never past the deadline) are the slices after which a blocked call returns, the deadline
// is checked and the CancelCheck called, as wait() does between the io_context's slices; they are set only
// when their value changes, so a keep-alive loop costs no setsockopt. A SyncReadStream: Beast's http::read
// functions parse what it receives.
class Client::Impl::BlockingIo {
public:
    BlockingIo(Impl& impl, Connection& c, Deadline& d, const CancelCheck& cancel, const std::string& where)
        : impl_(impl), c_(c), d_(d), cancel_(cancel), where_(where), fd_(c.socket().native_handle()) {
        // async_connect left the socket non-blocking; Asio sets that again before an asynchronous operation
        auto& socket = c.socket();
        if (socket.native_non_blocking()) {
            beast::error_code ec;
            socket.native_non_blocking(false, ec);
            if (ec) {
                impl_.drop(c_);
                throw ConnectionError("cannot use the connection to " + where_ + ": " + ec.message());
            }
        }
    }

    // Hands all of `data` to the kernel; returns how much of it was (all of it unless ec is set).
    std::size_t write(const std::string& data, beast::error_code& ec) {
        ec = {};
        std::size_t sent = 0;
        bool waited = false;
        while (sent < data.size()) {
            arm(SO_SNDTIMEO, c_.send_slice, Phase::write, waited);
            const auto n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
            if (!progress(n, sent, waited, ec)) return sent;
        }
        return sent;
    }

    // The parts, in order, as one gathering write (a streamed body's piece between its chunk's size line and CRLF,
    // without copying it into one string); as write(data) otherwise.
    std::size_t write(const Parts& parts, beast::error_code& ec) {
        ec = {};
        if (parts.size() > kMostParts) throw std::logic_error("a gathering write of more parts than kMostParts");
        std::array<iovec, kMostParts> iov{};
        std::size_t count = 0;
        std::size_t total = 0;
        for (const std::string_view p : parts) {
            if (p.empty()) continue;
            iov[count++] = iovec{const_cast<char*>(p.data()), p.size()};
            total += p.size();
        }
        std::size_t sent = 0;
        std::size_t first = 0;  // the first part not yet sent whole
        bool waited = false;
        while (sent < total) {
            arm(SO_SNDTIMEO, c_.send_slice, Phase::write, waited);
            msghdr m{};
            m.msg_iov = iov.data() + first;
            m.msg_iovlen = count - first;
            const auto n = ::sendmsg(fd_, &m, MSG_NOSIGNAL);
            const std::size_t before = sent;
            if (!progress(n, sent, waited, ec)) return sent;
            for (std::size_t left = sent - before; left > 0;) {
                if (left < iov[first].iov_len) {
                    iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
                    iov[first].iov_len -= left;
                    break;
                }
                left -= iov[first++].iov_len;
            }
        }
        return sent;
    }

    void read(ResponseReader& parser, bool header_only, beast::error_code& ec) {
        if (header_only)
            http::read_header(*this, c_.buffer, parser, ec);
        else
            http::read(*this, c_.buffer, parser, ec);
    }

    void read_some(ResponseReader& parser, beast::error_code& ec) { http::read_some(*this, c_.buffer, parser, ec); }

    // Recording phases: the response's first bytes into the read buffer (the recv() Beast's read would have
    // made first; the parser takes what is buffered before it reads more).
    void fill(beast::error_code& ec) {
        const std::size_t n = read_some(c_.buffer.prepare(beast::read_size(c_.buffer, 65536)), ec);
        c_.buffer.commit(n);
    }

    // SyncReadStream
    template <class MutableBuffers>
    std::size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
        const net::mutable_buffer b = *net::buffer_sequence_begin(buffers);  // a flat_buffer prepares one
        ec = {};
        if (b.size() == 0) return 0;
        bool waited = false;
        for (;;) {
            arm(SO_RCVTIMEO, c_.receive_slice, Phase::read, waited);
            const auto n = ::recv(fd_, b.data(), b.size(), 0);
            if (n > 0) return static_cast<std::size_t>(n);
            if (n == 0) {
                ec = net::error::eof;
                return 0;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                waited = true;  // a slice passed without data, or a signal came (Ctrl-C: the CancelCheck)
            } else {
                ec.assign(errno, beast::system_category());
                return 0;
            }
        }
    }
    template <class MutableBuffers>
    std::size_t read_some(const MutableBuffers& buffers) {
        beast::error_code ec;
        const std::size_t n = read_some(buffers, ec);
        if (ec) throw beast::system_error(ec);
        return n;
    }

private:
    // After a send: true to go on (n bytes more sent, or a slice without room, or a signal), false with `ec` set.
    static bool progress(ssize_t n, std::size_t& sent, bool& waited, beast::error_code& ec) {
        if (n >= 0) {
            sent += static_cast<std::size_t>(n);
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            waited = true;  // a slice passed without room in the socket's buffer, or a signal came
        } else {
            ec.assign(errno, beast::system_category());
            return false;
        }
        return true;
    }

    // Before a blocking call: the deadline, then (after a slice that passed without progress) the cancel
    // check, then the socket timeout for the next slice. Throws as wait() does, the connection closed.
    void arm(int option, std::chrono::microseconds& current, Phase phase, bool waited) {
        const auto now = Clock::now();
        const auto deadline = d_.at();
        if (now >= deadline) {
            impl_.drop(c_);
            throw TimeoutError(detail::timeout_text(d_, now, phase, where_));
        }
        if (waited && cancel_) {
            bool stop = false;
            try {
                stop = cancel_();
            } catch (...) {
                impl_.drop(c_);
                throw;
            }
            if (stop) {
                impl_.drop(c_);
                throw Cancelled("request to " + where_ + " cancelled (while " + detail::phase_text(phase) + ")");
            }
        }
        auto slice = std::chrono::duration_cast<std::chrono::microseconds>(impl_.owner.poll_interval_);
        if (deadline - now < slice)  // rounded up: a zero timeout would mean none
            slice = std::chrono::ceil<std::chrono::microseconds>(deadline - now);
        if (slice == current) return;
        timeval tv{};
        tv.tv_sec = static_cast<time_t>(slice.count() / 1000000);
        tv.tv_usec = static_cast<suseconds_t>(slice.count() % 1000000);
        if (::setsockopt(fd_, SOL_SOCKET, option, &tv, sizeof tv) != 0) {
            const beast::error_code ec(errno, beast::system_category());
            impl_.drop(c_);
            throw ConnectionError("cannot set the socket timeout of the connection to " + where_ + ": " + ec.message());
        }
        current = slice;
    }

    Impl& impl_;
    Connection& c_;
    Deadline& d_;
    const CancelCheck& cancel_;
    const std::string& where_;
    int fd_;
};

// TLS: the stream's asynchronous operations, run on the io_context by wait() with the deadlines and the
// cancel check between its slices.
class Client::Impl::AsyncIo {
public:
    AsyncIo(Impl& impl, Connection& c, Deadline& d, const CancelCheck& cancel, const std::string& where)
        : impl_(impl), c_(c), d_(d), cancel_(cancel), where_(where) {}

    std::size_t write(const std::string& data, beast::error_code& ec) {
        return write(Parts{std::string_view(data)}, ec);
    }

    std::size_t write(const Parts& parts, beast::error_code& ec) {
        if (parts.size() > kMostParts) throw std::logic_error("a gathering write of more parts than kMostParts");
        std::array<net::const_buffer, kMostParts> buffers{};
        std::size_t count = 0;
        for (const std::string_view p : parts) buffers[count++] = net::buffer(p.data(), p.size());
        bool done = false;
        std::size_t sent = 0;
        net::async_write(*c_.tls, buffers, [&](const beast::error_code& e, std::size_t n) {
            ec = e;
            sent = n;
            done = true;
        });
        impl_.wait(done, d_, cancel_, Phase::write, true, where_, c_);
        return sent;
    }

    void read(ResponseReader& parser, bool header_only, beast::error_code& ec) {
        bool done = false;
        const auto handler = [&](const beast::error_code& e, std::size_t) {
            ec = e;
            done = true;
        };
        if (header_only)
            http::async_read_header(*c_.tls, c_.buffer, parser, handler);
        else
            http::async_read(*c_.tls, c_.buffer, parser, handler);
        impl_.wait(done, d_, cancel_, Phase::read, true, where_, c_);
    }

    void read_some(ResponseReader& parser, beast::error_code& ec) {
        bool done = false;
        http::async_read_some(*c_.tls, c_.buffer, parser, [&](const beast::error_code& e, std::size_t) {
            ec = e;
            done = true;
        });
        impl_.wait(done, d_, cancel_, Phase::read, true, where_, c_);
    }

    // As BlockingIo::fill: the first TLS read of the response, into the read buffer.
    void fill(beast::error_code& ec) {
        bool done = false;
        std::size_t got = 0;
        c_.tls->async_read_some(c_.buffer.prepare(beast::read_size(c_.buffer, 65536)),
                                [&](const beast::error_code& e, std::size_t n) {
                                    ec = e;
                                    got = n;
                                    done = true;
                                });
        impl_.wait(done, d_, cancel_, Phase::read, true, where_, c_);
        c_.buffer.commit(got);
    }

private:
    Impl& impl_;
    Connection& c_;
    Deadline& d_;
    const CancelCheck& cancel_;
    const std::string& where_;
};

}  // namespace beast_client
