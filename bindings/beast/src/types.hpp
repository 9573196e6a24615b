// The objects behind the Python types (Client, Headers, Response, StreamResponse) and the GIL handling of a
// request (run_interruptible), shared by types.cpp, client.cpp and module.cpp.
#pragma once

#include <pybind11/pybind11.h>  // first: it includes Python.h
#include <pybind11/stl.h>       // std::optional<double> <-> float | None (the timeout properties)

#include "beast_client/client.hpp"
#include "convert.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
    bc::Headers headers;  // the default headers
};

// The Python Client: the C++ client plus the Python-level "closed" state (as in reqwest_client: after
// close(), requests raise RuntimeError).
struct PyClient {
    PyClient(ClientSettings s, bc::TlsConfig tls, py::object verify_arg)
        : settings(std::move(s)), verify(std::move(verify_arg)), client(make_client(settings, std::move(tls))) {}

    // Without the GIL: loading a large CA bundle takes a while. (C++17: the prvalue initializes the member.)
    static bc::Client make_client(const ClientSettings& s, bc::TlsConfig tls) {
        const bc::Timeouts t{to_duration(s.timeout, "timeout"), to_duration(s.connect_timeout, "connect_timeout"),
                             to_duration(s.read_timeout, "read_timeout")};
        py::gil_scoped_release nogil;
        return bc::Client(t, std::move(tls));
    }

    const ClientSettings settings;
    py::object verify;  // as given (read-only property)
    bc::Client client;
    std::atomic<bool> closed{false};

    bc::Client& open() {
        if (closed.load()) throw std::runtime_error("Client is closed");
        return client;
    }

    // Idempotent. A request running in another thread finishes first; that thread then closes the
    // connection (see Finish).
    void close() {
        closed.store(true);
        drop_if_closed();
    }

    void drop_if_closed() {
        if (!closed.load()) return;
        try {
            client.close();
        } catch (const bc::ConcurrentUse&) {  // busy: the running request's thread will do it
        }
    }

    // After each request: a close() that came meanwhile from another thread takes effect now.
    struct Finish {
        PyClient& self;
        ~Finish() { self.drop_if_closed(); }
    };
};

inline bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

// Runs `call(cancel_check)` with or without the GIL. A signal handler that raised (KeyboardInterrupt)
// cancels the request; the Python exception is re-raised once the C++ call has unwound.
template <class Call>
inline auto run_interruptible(bool release_gil, Call&& call) -> decltype(call(bc::CancelCheck{})) {
    std::optional<py::error_already_set> pending;
    try {
        if (release_gil) {
            const bc::CancelCheck check = [&pending] {
                // While the interpreter finalizes, taking the GIL would end this (daemon) thread inside
                // C++ code: keep waiting instead; the process is about to exit anyway.
                if (interpreter_finalizing()) return false;
                py::gil_scoped_acquire gil;
                if (PyErr_CheckSignals() != 0) {
                    pending.emplace();  // fetches (and clears) the error while we hold the GIL
                    return true;
                }
                return false;
            };
            py::gil_scoped_release nogil;
            return call(check);
        }
        const bc::CancelCheck check = [&pending] {  // the GIL is already held
            if (PyErr_CheckSignals() != 0) {
                pending.emplace();
                return true;
            }
            return false;
        };
        return call(check);
    } catch (const bc::Cancelled&) {
        if (pending) throw std::move(*pending);  // re-raise KeyboardInterrupt & co.
        throw;
    }
}

// beast_client.Headers: the fields of a response, case-insensitive, multi-valued, in the order received.
struct PyHeaders {
    std::vector<std::pair<py::str, py::str>> fields;  // (lower-case name, value)
    py::list names;                                   // unique lower-case names, first-seen order

    static py::str lower(const py::handle& name) { return py::str(name.attr("lower")()); }

    void add(const py::str& name, const py::str& value) {
        py::str key = lower(name);
        bool seen = false;
        for (const auto& f : fields)
            if (f.first.equal(key)) {
                seen = true;
                break;
            }
        if (!seen) names.append(key);
        fields.emplace_back(std::move(key), value);
    }

    // every value of `name`, or an empty list (name: any object; a non-str never matches)
    py::list all(const py::handle& name) const {
        py::list out;
        if (!py::isinstance<py::str>(name)) return out;
        const py::str key = lower(name);
        for (const auto& f : fields)
            if (f.first.equal(key)) out.append(f.second);
        return out;
    }

    py::object joined(const py::handle& name) const {
        const py::list values = all(name);
        if (values.empty()) return py::object();
        if (values.size() == 1) return values[0];
        return py::str(", ").attr("join")(values);
    }

    static PyHeaders from_bc(const bc::Headers& headers) {
        PyHeaders out;
        for (const auto& [name, value] : headers) out.add(latin1(name), latin1(value));
        return out;
    }
};

struct PyResponse {
    int status;
    std::string reason;
    std::string url;
    py::object headers;  // a PyHeaders, the same object on every access
    py::bytes body;
};

PyResponse to_python(bc::Response&& r);

// The charset parameter of a Content-Type ("utf-8" when there is none or Python does not know it).
std::string charset_of(const PyHeaders& h);

// beast_client.StreamResponse: Client.stream()'s result. It keeps its Client alive (`client`).
struct PyStream {
    py::object client;  // the PyClient
    PyClient* owner;
    std::unique_ptr<bc::ResponseStream> stream;
    py::object headers;
    std::atomic<bool> closed{false};

    // the next chunk (GIL released while waiting), or a null object at the end
    py::object next_chunk() {
        if (closed.load()) return py::object();
        std::string chunk;
        PyClient::Finish finish{*owner};
        const bool more =
            run_interruptible(true, [&](const bc::CancelCheck& check) { return stream->next(chunk, check); });
        if (!more) return py::object();
        return py::bytes(chunk.data(), chunk.size());
    }

    void close() {
        if (closed.exchange(true)) return;
        stream->close();
    }
};

// iter_bytes()'s iterator
struct PyBytesIterator {
    py::object owner;  // the PyStream
};

// Headers, Response, _BytesIterator and StreamResponse (types.cpp); Client (client.cpp).
void register_types(py::module_& m);
void register_client(py::module_& m);

}  // namespace beast_py
