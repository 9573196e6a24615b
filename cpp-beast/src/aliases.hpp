// The short names of Boost.Beast / Boost.Asio used throughout the library's sources.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace beast_client {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

namespace detail {

inline beast::string_view bsv(std::string_view s) { return {s.data(), s.size()}; }
inline std::string str(beast::string_view s) { return std::string(s.data(), s.size()); }

}  // namespace detail

}  // namespace beast_client
