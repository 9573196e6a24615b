// What the in-test servers share (test_server.hpp: plain HTTP; tls_server.hpp: TLS): the accept loop, reading
// one request, and a few helpers.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace test_support {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

// A listening socket on 127.0.0.1 (an ephemeral port) and a thread per accepted connection, which runs
// `serve`. stop() (or the destructor) stops accepting, shuts every accepted socket down, so that blocked
// handlers return, and joins their threads: every test is bounded in time.
class AcceptLoop {
public:
    using Serve = std::function<void(const std::shared_ptr<tcp::socket>& sock, int index)>;

    AcceptLoop() : acceptor_(ioc_) {
        const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
        acceptor_.open(ep.protocol());
        acceptor_.set_option(tcp::acceptor::reuse_address(true));
        acceptor_.bind(ep);
        acceptor_.listen();
        port_ = acceptor_.local_endpoint().port();
    }
    ~AcceptLoop() { stop(); }
    AcceptLoop(const AcceptLoop&) = delete;
    AcceptLoop& operator=(const AcceptLoop&) = delete;

    // Starts accepting (once the owner is set up: `serve` may use it).
    void start(Serve serve) {
        serve_ = std::move(serve);
        accept_thread_ = std::thread([this] { run(); });
    }

    // Idempotent. An owner calls it first in its destructor: the handlers use the owner's members.
    void stop() {
        if (!accept_thread_.joinable()) return;
        stopping_ = true;
        {  // unblock accept() by connecting to ourselves
            boost::system::error_code ec;
            tcp::socket s(ioc_);
            s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_), ec);
            accept_thread_.join();
        }
        std::vector<std::thread> threads;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (auto& s : sockets_) ::shutdown(s->native_handle(), SHUT_RDWR);
            threads.swap(threads_);
        }
        for (auto& t : threads) t.join();
    }

    std::uint16_t port() const { return port_; }
    int accepts() const { return accepts_.load(); }

private:
    void run() {
        for (;;) {
            auto sock = std::make_shared<tcp::socket>(ioc_);
            boost::system::error_code ec;
            acceptor_.accept(*sock, ec);
            if (stopping_ || ec) return;
            const int index = accepts_++;
            std::lock_guard<std::mutex> lock(mutex_);
            sockets_.push_back(sock);
            threads_.emplace_back([this, sock, index] { serve_(sock, index); });
        }
    }

    net::io_context ioc_;
    tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    Serve serve_;
    std::atomic<bool> stopping_{false};
    std::atomic<int> accepts_{0};
    std::thread accept_thread_;
    std::mutex mutex_;
    std::vector<std::shared_ptr<tcp::socket>> sockets_;
    std::vector<std::thread> threads_;
};

// Reads one request (headers + Content-Length body) into `request`: `buf` holds what was read ahead (kept
// across calls), `read(chunk, size)` reads more (<= 0: EOF / error / shutdown, then false).
template <class Read>
bool read_http_request(std::string& buf, Read&& read, std::string& request) {
    std::size_t header_end;
    char chunk[4096];
    while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
        const long n = read(chunk, sizeof chunk);
        if (n <= 0) return false;
        buf.append(chunk, static_cast<std::size_t>(n));
    }
    std::size_t length = 0;
    std::string lower;
    for (std::size_t i = 0; i < header_end; ++i) lower += static_cast<char>(std::tolower(buf[i]));
    if (const auto p = lower.find("\r\ncontent-length:"); p != std::string::npos)
        length = std::stoul(lower.substr(p + 17));
    const std::size_t total = header_end + 4 + length;
    while (buf.size() < total) {
        const long n = read(chunk, sizeof chunk);
        if (n <= 0) return false;
        buf.append(chunk, static_cast<std::size_t>(n));
    }
    request = buf.substr(0, total);
    buf.erase(0, total);
    return true;
}

inline const std::string kHello = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello";

inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace test_support
