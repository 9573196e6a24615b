// The tiny raw-socket HTTP server of the client tests (canned answers, one thread per connection), shared by
// test_client.cpp and test_features.cpp. Every test is bounded in time: the server shuts its sockets down when
// it is destroyed.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <poll.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace test_support {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class TestServer;

// One accepted connection, handed to the test's handler on its own thread.
class Conn {
public:
    Conn(std::shared_ptr<tcp::socket> sock, int index, TestServer& server)
        : sock_(std::move(sock)), index_(index), server_(server) {}

    int index() const { return index_; }

    // Reads one request (headers + Content-Length body). False on EOF / error / shutdown.
    bool read_request(std::string* out = nullptr);
    bool write(const std::string& data) {
        boost::system::error_code ec;
        net::write(*sock_, net::buffer(data), ec);
        return !ec;
    }
    void close() {
        boost::system::error_code ec;
        sock_->shutdown(tcp::socket::shutdown_both, ec);
        sock_->close(ec);
    }
    // Closes with SO_LINGER 0: the peer sees a reset.
    void reset() {
        boost::system::error_code ec;
        sock_->set_option(net::socket_base::linger(true, 0), ec);
        sock_->close(ec);
    }
    // Waits up to `limit` for the next request to start (or the peer to close); false when the connection
    // stayed idle that long (a server's keep-alive timeout).
    bool wait_readable(std::chrono::milliseconds limit) {
        if (!buf_.empty()) return true;
        pollfd p{sock_->native_handle(), POLLIN, 0};
        return ::poll(&p, 1, static_cast<int>(limit.count())) > 0;
    }
    // Blocks until the peer closes or the server shuts down.
    void wait_closed() {
        char c[256];
        boost::system::error_code ec;
        while (!ec) sock_->read_some(net::buffer(c), ec);
    }

private:
    std::shared_ptr<tcp::socket> sock_;
    int index_;
    TestServer& server_;
    std::string buf_;
};

class TestServer {
public:
    using Handler = std::function<void(Conn&)>;

    explicit TestServer(Handler handler) : handler_(std::move(handler)), acceptor_(ioc_) {
        const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
        acceptor_.open(ep.protocol());
        acceptor_.set_option(tcp::acceptor::reuse_address(true));
        acceptor_.bind(ep);
        acceptor_.listen();
        port_ = acceptor_.local_endpoint().port();
        accept_thread_ = std::thread([this] { accept_loop(); });
    }

    ~TestServer() {
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
            for (auto& s : sockets_) {
                boost::system::error_code ec;
                s->shutdown(tcp::socket::shutdown_both, ec);
            }
            threads.swap(threads_);
        }
        for (auto& t : threads) t.join();
    }

    std::uint16_t port() const { return port_; }
    std::string url(const std::string& path = "/") const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
    int accepts() const { return accepts_.load(); }

    std::vector<std::string> requests() {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }
    void record(const std::string& request) {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back(request);
        cv_.notify_all();
    }
    // Waits until `n` requests were received (bounded).
    bool wait_requests(std::size_t n, std::chrono::milliseconds limit = 2000ms) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, limit, [&] { return requests_.size() >= n; });
    }

private:
    void accept_loop() {
        for (;;) {
            auto sock = std::make_shared<tcp::socket>(ioc_);
            boost::system::error_code ec;
            acceptor_.accept(*sock, ec);
            if (stopping_ || ec) return;
            const int index = accepts_++;
            std::lock_guard<std::mutex> lock(mutex_);
            sockets_.push_back(sock);
            threads_.emplace_back([this, sock, index] {
                Conn conn(sock, index, *this);
                try {
                    handler_(conn);
                } catch (...) {
                }
            });
        }
    }

    Handler handler_;
    net::io_context ioc_;
    tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> accepts_{0};
    std::thread accept_thread_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<std::shared_ptr<tcp::socket>> sockets_;
    std::vector<std::thread> threads_;
    std::vector<std::string> requests_;
};

inline bool Conn::read_request(std::string* out) {
    boost::system::error_code ec;
    std::size_t header_end;
    while ((header_end = buf_.find("\r\n\r\n")) == std::string::npos) {
        char chunk[4096];
        const std::size_t n = sock_->read_some(net::buffer(chunk), ec);
        if (ec) return false;
        buf_.append(chunk, n);
    }
    std::size_t length = 0;
    std::string lower;
    for (std::size_t i = 0; i < header_end; ++i) lower += static_cast<char>(std::tolower(buf_[i]));
    if (const auto p = lower.find("\r\ncontent-length:"); p != std::string::npos)
        length = std::stoul(lower.substr(p + 17));
    const std::size_t total = header_end + 4 + length;
    while (buf_.size() < total) {
        char chunk[4096];
        const std::size_t n = sock_->read_some(net::buffer(chunk), ec);
        if (ec) return false;
        buf_.append(chunk, n);
    }
    const std::string request = buf_.substr(0, total);
    buf_.erase(0, total);
    server_.record(request);
    if (out) *out = request;
    return true;
}

inline const std::string kHello = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello";

// Answers every request on the connection with `response`.
inline TestServer::Handler answer_all(std::string response) {
    return [response](Conn& c) {
        while (c.read_request()) c.write(response);
    };
}

inline std::uint16_t unused_port() {
    net::io_context ioc;
    tcp::acceptor a(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace test_support
