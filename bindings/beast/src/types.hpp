// The objects behind the Python types (Client, Headers, Response, StreamResponse) and the GIL handling of a
// request (run_interruptible), shared by types.cpp, client.cpp and module.cpp.
#pragma once

#include <pybind11/pybind11.h>  // first: it includes Python.h
#include <pybind11/stl.h>       // std::optional<double> <-> float | None (the timeout properties)

#include "beast_client/client.hpp"
#include "beast_client/cookies.hpp"
#include "convert.hpp"
#include "settings.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace beast_py {

// Fork safety. A child made by fork() inherits the parent's clients as they are: their pooled sockets and their
// io_context's epoll instance are the parent's own (shared, not copied), so closing or using them in the child
// would break the parent's connections. The process's generation (types.cpp: a pthread_atfork handler bumps
// it in the child) tells a client, at one atomic load per request, that it was made in the parent: it then
// makes a new C++ client (connections, io_context) and leaves the parent's alone, never closed nor destroyed
// in the child (its copies of the sockets close when the child exits).
extern std::atomic<std::uint64_t> fork_generation_counter;
inline std::uint64_t fork_generation() { return fork_generation_counter.load(std::memory_order_relaxed); }

// The Python Client: the C++ client plus the Python-level "closed" state (as in reqwest_client: after
// close(), requests raise RuntimeError).
struct PyClient {
    PyClient(ClientSettings s, bc::TlsConfig tls_config, py::object verify_arg)
        : settings(std::move(s)),
          verify(std::move(verify_arg)),
          tls(std::move(tls_config)),
          client(make_client(settings, tls, true)) {}
    PyClient(const PyClient&) = delete;
    PyClient& operator=(const PyClient&) = delete;
    ~PyClient() {
        if (stale()) (void)client.release();  // the parent's (see fork_generation): left alone
    }

    // Loading a large CA bundle takes a while: without the GIL, unless it must stay held (renew()).
    static std::unique_ptr<bc::Client> make_client(const ClientSettings& s, const bc::TlsConfig& tls,
                                                   bool release_gil) {
        const bc::Timeouts t = timeouts_of(s);
        std::optional<py::gil_scoped_release> nogil;
        if (release_gil) nogil.emplace();
        return std::make_unique<bc::Client>(t, tls, std::chrono::milliseconds(50),
                                            static_cast<std::size_t>(s.max_connections.value_or(0)), s.proxy);
    }

    const ClientSettings settings;
    py::object verify;        // as given (read-only property)
    const bc::TlsConfig tls;  // to make the client again in a forked child
    std::unique_ptr<bc::Client> client;
    std::atomic<std::uint64_t> generation{fork_generation()};  // the process (fork generation) client is from
    std::mutex renewing;
    std::atomic<bool> closed{false};

    bool stale() const { return generation.load(std::memory_order_relaxed) != fork_generation(); }

    bc::Client& open() {
        if (closed.load()) throw std::runtime_error("Client is closed");
        if (stale()) renew();
        return *client;
    }

    // In a forked child: a new C++ client instead of the parent's, which is leaked. The GIL stays held (a
    // thread waiting for `renewing` holds it too); the TLS context is already in the process-wide cache.
    void renew() {
        std::lock_guard<std::mutex> lock(renewing);
        if (!stale()) return;
        auto fresh = make_client(settings, tls, false);
        (void)client.release();
        client = std::move(fresh);
        generation.store(fork_generation(), std::memory_order_relaxed);
    }

    // Idempotent. The idle connections close now; a request running in another thread finishes first and
    // its thread then closes the connection it hands back (see Finish).
    void close() {
        closed.store(true);
        drop_if_closed();
    }

    void drop_if_closed() {
        if (!closed.load() || stale()) return;  // a forked child never closes the parent's connections
        client->close();
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
    py::object phases;  // a dict: phase -> seconds (empty when the path recorded none)
};

PyResponse to_python(bc::Response&& r);

// Where a request's time went, as Python sees it: {"connect": ..., "tls": ..., "send": ..., "wait": ...,
// "receive": ...} ("dns" first when a host name was resolved), in seconds (float) or nanoseconds (int).
py::dict phases_dict(const bc::Phases& p, bool seconds);

// The charset parameter of a Content-Type ("utf-8" when there is none or Python does not know it).
std::string charset_of(const PyHeaders& h);

// beast_client.StreamResponse: Client.stream()'s result. It keeps its Client alive (`client`).
struct PyStream {
    PyStream() = default;
    PyStream(const PyStream&) = delete;
    PyStream& operator=(const PyStream&) = delete;
    ~PyStream() {
        if (stale()) (void)stream.release();  // the parent's connection (see fork_generation): left alone
    }

    py::object client;  // the PyClient
    PyClient* owner;
    std::unique_ptr<bc::ResponseStream> stream;
    py::object headers;
    std::atomic<bool> closed{false};
    // a thread is in next_chunk() (or close()): the C++ stream is used by one thread at a time
    std::atomic<bool> busy{false};
    std::uint64_t generation = fork_generation();

    bool stale() const { return generation != fork_generation(); }

    // the next chunk (GIL released while waiting), or a null object at the end
    py::object next_chunk() {
        if (stale())
            throw std::runtime_error(
                "this response was opened by the parent process before fork(); its connection is the parent's: "
                "request it again in the child");
        if (closed.load()) return py::object();
        if (busy.exchange(true)) throw std::runtime_error("this StreamResponse is being read by another thread");
        struct Done {  // a close() that came meanwhile from another thread takes effect now
            PyStream& s;
            ~Done() {
                s.busy.store(false);
                if (s.closed.load()) s.close_stream();
            }
        } done{*this};
        std::string chunk;
        PyClient::Finish finish{*owner};
        const bool more =
            run_interruptible(true, [&](const bc::CancelCheck& check) { return stream->next(chunk, check); });
        if (!more) return py::object();
        return py::bytes(chunk.data(), chunk.size());
    }

    void close() {
        if (closed.exchange(true) || stale()) return;
        close_stream();
    }

    // closes the C++ stream unless a reader is in it (it does so when it leaves); idempotent
    void close_stream() {
        if (busy.exchange(true)) return;
        stream->close();
        busy.store(false);
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
