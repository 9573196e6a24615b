// The in-test HTTP proxy (the Python tests use Debian's tinyproxy, bindings/tests/test_proxy.py): CONNECT opens a
// tunnel to 127.0.0.1:<port> (bytes relayed both ways until either side closes); any other request is answered
// by the proxy itself with its request line as the body, so that a test sees the absolute form. With
// credentials, a request without the right Proxy-Authorization gets a 407. Every head it received is kept.
#pragma once

#include "server_base.hpp"

#include <boost/asio/write.hpp>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace test_support {

class TestProxy {
public:
    // `authorization`: the Proxy-Authorization value required ("Basic ..."), or empty: none.
    explicit TestProxy(std::string authorization = {}) : authorization_(std::move(authorization)) {
        loop_.start([this](const std::shared_ptr<tcp::socket>& sock, int) { serve(sock); });
    }
    ~TestProxy() { loop_.stop(); }

    std::uint16_t port() const { return loop_.port(); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
    int accepts() const { return loop_.accepts(); }
    std::vector<std::string> heads() {
        std::lock_guard<std::mutex> lock(mutex_);
        return heads_;
    }

private:
    void serve(const std::shared_ptr<tcp::socket>& sock) {
        std::string buf;
        const auto read = [&](char* data, std::size_t size) -> long {
            boost::system::error_code ec;
            const std::size_t n = sock->read_some(net::buffer(data, size), ec);
            return ec ? -1 : static_cast<long>(n);
        };
        std::string head;
        while (read_http_request(buf, read, head)) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                heads_.push_back(head);
            }
            const std::string line = head.substr(0, head.find("\r\n"));
            if (!authorization_.empty() &&
                head.find("\r\nProxy-Authorization: " + authorization_ + "\r\n") == std::string::npos) {
                write(*sock, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n");
                continue;
            }
            if (line.rfind("CONNECT ", 0) == 0) return tunnel(sock, line, buf);
            write(*sock, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(line.size()) + "\r\n\r\n" + line);
        }
    }

    static void write(tcp::socket& s, const std::string& data) {
        boost::system::error_code ec;
        net::write(s, net::buffer(data), ec);
    }

    void tunnel(const std::shared_ptr<tcp::socket>& client, const std::string& line, const std::string& early) {
        const auto colon = line.rfind(':');
        const auto port = static_cast<std::uint16_t>(std::stoul(line.substr(colon + 1, line.find(' ', colon) - colon)));
        auto upstream = std::make_shared<tcp::socket>(ioc_);
        boost::system::error_code ec;
        upstream->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
        if (ec) return write(*client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        write(*client, "HTTP/1.1 200 Connection established\r\n\r\n");
        if (!early.empty()) write(*upstream, early);
        std::thread back([client, upstream] { relay(*upstream, *client); });
        relay(*client, *upstream);
        back.join();
    }

    // Copies from -> to until either ends; then both are shut down (the other relay ends too).
    static void relay(tcp::socket& from, tcp::socket& to) {
        char data[16384];
        for (;;) {
            boost::system::error_code ec;
            const std::size_t n = from.read_some(net::buffer(data), ec);
            if (ec || !net::write(to, net::buffer(data, n), ec) || ec) break;
        }
        boost::system::error_code ignored;
        from.shutdown(tcp::socket::shutdown_both, ignored);
        to.shutdown(tcp::socket::shutdown_both, ignored);
    }

    std::string authorization_;
    net::io_context ioc_;
    std::mutex mutex_;
    std::vector<std::string> heads_;
    AcceptLoop loop_;  // last: stopped before the members its handlers use go
};

}  // namespace test_support
