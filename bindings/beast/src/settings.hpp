// What Client and AsyncClient share: their constructor's options (ClientSettings, checked once here) and a
// request's arguments (Prepared: request(), stream()), converted with the GIL held.
#pragma once

#include <pybind11/pybind11.h>  // first: it includes Python.h
#include <pybind11/stl.h>       // std::optional<double> <-> float | None (the timeout properties)

#include "beast_client/client.hpp"
#include "beast_client/cookies.hpp"
#include "convert.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#ifndef BEAST_CLIENT_PY_VERSION  // set by CMakeLists.txt from pyproject.toml's version: there is no other
#error "BEAST_CLIENT_PY_VERSION is not defined: build with scikit-build-core (pip install ./bindings/beast)"
#endif

namespace beast_py {

// Client(...)'s settings beyond the C++ client's (immutable after construction: read without a lock).
struct ClientSettings {
    std::optional<double> timeout, connect_timeout, read_timeout;
    bool follow_redirects = true;
    int max_redirects = 10;
    bool decompress = true;
    std::string user_agent;
    bc::Headers headers;                     // the default headers
    std::shared_ptr<bc::CookieJar> cookies;  // cookies=True (kept by a forked child's new C++ client)
    std::optional<std::uint64_t> max_body_size;
    std::optional<std::uint64_t> max_connections;  // per origin; None: no bound
    bc::ProxyConfig proxy;  // proxy=, or the environment's (trust_env=True), read when the client is made
};

// The constructor's keyword options, checked: ValueError / TypeError naming the argument (ValueError for a
// proxy URL that cannot be used is the C++ client's, when it is made).
ClientSettings client_settings(const py::object& timeout, const py::object& connect_timeout,
                               const py::object& read_timeout, bool follow_redirects, int max_redirects,
                               const py::object& headers, bool decompress, const py::object& user_agent,
                               const py::object& cookies, const py::object& max_body_size,
                               const py::object& max_connections, bool trust_env, const py::object& proxy);

bc::Timeouts timeouts_of(const ClientSettings& s);

// A CA bundle that cannot be opened: OSError(errno, strerror, filename), i.e. FileNotFoundError,
// PermissionError, ... as open() raises them.
[[noreturn]] void raise_os_error(const std::system_error& e, const std::string& path);

// A request's arguments, converted with the GIL held; then sent without it.
struct Prepared {
    std::string method;
    std::string url;
    bc::Headers headers;
    Body body;
    bc::RequestOptions options;
};

// request()'s and stream()'s arguments with the client's settings. `stream_body`: an iterable or file body is
// read as it is sent (Client: options.upload), else read whole now (AsyncClient).
void prepare(Prepared& p, const ClientSettings& s, const std::string& method, const std::string& url,
             const py::object& params, const py::object& headers, const py::object& body, const py::object& json,
             const py::object& timeout, const py::object& follow_redirects, bool stream_body);

// "beast-client/<version>"
std::string default_user_agent();

}  // namespace beast_py
