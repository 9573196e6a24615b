// floor-driver: the raw-socket floor of the clientbench table.
//
// Each worker owns one blocking TCP socket (TCP_NODELAY) and, per request, writes one pre-built
// `GET <target> HTTP/1.1` request and reads exactly one response: the head up to CRLFCRLF, the status
// code, Content-Length, then exactly that many body bytes (counted, not kept). No HTTP library, no
// allocation per request, no event loop: what is left is the kernel, the loopback and the server, i.e.
// the physical limit of this machine and server for the workload. It is deliberately minimal: responses
// without Content-Length (chunked, EOF-delimited) are a ProtocolError, and the timeout applies to each
// socket operation (SO_RCVTIMEO/SO_SNDTIMEO) rather than to the whole request.
//
// A GET (idempotent, so sending it again is harmless) on a re-used connection that the server closed
// meanwhile (EOF or reset before any response byte) is retried once on a new connection, and `Connection:
// close` is honoured. (Unlike the Beast client, it does not check an idle connection before re-using it.)
#include "beast_client/client.hpp"
#include "harness.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using beast_client::ConnectionError;
using beast_client::ProtocolError;

constexpr std::size_t kHeadLimit = 64 * 1024;

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

class FloorClient final : public harness::Client {
public:
    explicit FloorClient(double timeout_s) : timeout_s_(timeout_s), buf_(kHeadLimit) {}
    ~FloorClient() override { disconnect(); }

    harness::Fetch get(const std::string& url) override {
        if (url != url_text_) {
            const beast_client::Url u = beast_client::parse_url(url);  // InvalidUrl on bad input
            disconnect();
            url_ = u;
            url_text_ = url;
            request_ = "GET " + u.target + " HTTP/1.1\r\nHost: " + u.host + ":" + std::to_string(u.port) + "\r\n\r\n";
        }
        const bool reused = fd_ >= 0;
        if (!reused) connect_socket();
        try {
            return exchange();
        } catch (const Stale&) {
            disconnect();
            if (!reused)
                throw ConnectionError("connection to " + where() + " closed before the response",
                                      ConnectionError::Kind::reset);
            connect_socket();
            try {
                return exchange();
            } catch (const Stale&) {
                disconnect();
                throw ConnectionError("connection to " + where() + " closed before the response",
                                      ConnectionError::Kind::reset);
            }
        } catch (...) {
            disconnect();
            throw;
        }
    }

private:
    std::string where() const { return url_.host + ":" + std::to_string(url_.port); }

    void disconnect() {
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
        if (const int rc = ::getaddrinfo(url_.host.c_str(), port.c_str(), &hints, &res); rc != 0)
            throw ConnectionError("cannot resolve " + url_.host + ": " + ::gai_strerror(rc));
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
            if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                fd_ = fd;
                return;
            }
            last_err = errno;
            ::close(fd);
        }
        fail_errno("connect to", last_err);
    }

    // Reads more bytes into buf_ at have_; returns false on EOF.
    bool fill() {
        for (;;) {
            const ssize_t n = ::recv(fd_, buf_.data() + have_, buf_.size() - have_, 0);
            if (n > 0) {
                have_ += static_cast<std::size_t>(n);
                return true;
            }
            if (n == 0) return false;
            if (errno == EINTR) continue;
            fail_errno("read from", errno);
        }
    }

    harness::Fetch exchange() {
        // write the pre-built request
        std::size_t sent = 0;
        while (sent < request_.size()) {
            const ssize_t n = ::send(fd_, request_.data() + sent, request_.size() - sent, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno == EPIPE || errno == ECONNRESET) throw Stale{};
                fail_errno("write to", errno);
            }
            sent += static_cast<std::size_t>(n);
        }
        // read the head
        have_ = 0;
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
        while (got < length) {
            have_ = 0;
            if (!fill()) throw ConnectionError("connection to " + where() + " closed in the middle of the body");
            got += std::min<std::uint64_t>(have_, length - got);
        }
        have_ = 0;
        if (close_after) disconnect();
        return {status, length};
    }

    double timeout_s_;
    int fd_ = -1;
    std::string url_text_;
    beast_client::Url url_{};
    std::string request_;
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
        "pre-built request, Content-Length responses only, blocking socket per thread",
        "\nThe floor: a minimal raw-socket client that sends a pre-built GET and reads exactly one\n"
        "Content-Length response per request (one blocking socket per thread). Prints one clientbench.raw/1\n"
        "JSON document on stdout (see docs/raw-format.md).",
        [](double timeout_s) { return std::make_unique<FloorClient>(timeout_s); },
    };
    return harness::main(argc, argv, driver);
}
