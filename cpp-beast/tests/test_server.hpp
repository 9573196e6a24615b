// The tiny raw-socket HTTP server of the client tests (canned answers, one thread per connection), shared by
// test_client.cpp and test_features.cpp. Every test is bounded in time: the server shuts its sockets down when
// it is destroyed.
#pragma once

#include "server_base.hpp"

#include <boost/asio/write.hpp>

#include <poll.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace test_support {

using namespace std::chrono_literals;

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
    // More bytes: what read_request() read ahead, else the socket's next ones. False on EOF / error.
    bool read_some(std::string& out) {
        if (!buf_.empty()) {
            out += buf_;
            buf_.clear();
            return true;
        }
        char data[16384];
        boost::system::error_code ec;
        const std::size_t n = sock_->read_some(net::buffer(data), ec);
        if (ec) return false;
        out.append(data, n);
        return true;
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

    explicit TestServer(Handler handler) : handler_(std::move(handler)) {
        loop_.start([this](const std::shared_ptr<tcp::socket>& sock, int index) {
            Conn conn(sock, index, *this);
            try {
                handler_(conn);
            } catch (...) {
            }
        });
    }
    ~TestServer() { loop_.stop(); }

    std::uint16_t port() const { return loop_.port(); }
    std::string url(const std::string& path = "/") const { return "http://127.0.0.1:" + std::to_string(port()) + path; }
    int accepts() const { return loop_.accepts(); }

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
    Handler handler_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<std::string> requests_;
    AcceptLoop loop_;  // last: stopped before the members its handlers use go
};

inline bool Conn::read_request(std::string* out) {
    std::string request;
    const auto read = [this](char* data, std::size_t size) -> long {
        boost::system::error_code ec;
        const std::size_t n = sock_->read_some(net::buffer(data, size), ec);
        return ec ? -1 : static_cast<long>(n);
    };
    if (!read_http_request(buf_, read, request)) return false;
    server_.record(request);
    if (out) *out = request;
    return true;
}

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

}  // namespace test_support
