// The asyncio side of beast_client (aio.cpp): RawAsyncClient, RawStream and Completer, which
// python/beast_client/__init__.py wraps as AsyncClient and AsyncStreamResponse; RawAsyncClient's loop path
// (aio_loop.cpp: get, fetch_len and fetch over http:// on the running loop's own thread).
#pragma once

#include "aio_loop.hpp"
#include "types.hpp"

#include "beast_client/async_client.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

namespace beast_py {

void register_aio(pybind11::module_& m);

// The process's IoThread (aio.cpp), started by the first RawAsyncClient (again in a forked child).
bc::IoThread& io_thread();

// The Python exception an operation's error stands for (errors.cpp's translators).
py::object exception_object(std::exception_ptr e);

// A future of `completer`'s loop (registered with it, as a request's) and what resolves it with a bool from any
// thread, once (RawUpload.send()'s wait for room).
std::pair<py::object, std::function<void(bool)>> flag_future(const py::object& completer);

// upload.cpp: RawUpload, and the streamed body a request's `body` stands for when it is one (taken: a second
// request with the same RawUpload is a TypeError; with `json` too, a TypeError); null for any other body.
void register_upload(pybind11::module_& m);
std::shared_ptr<bc::AsyncBodySource> take_upload(const py::object& body, const py::object& json);

// RawAsyncClient: the C++ AsyncClient (its operations on the IoThread) and its loop path.
struct PyAsyncClient {
    PyAsyncClient(ClientSettings s, bc::TlsConfig tls_config, py::object verify_arg)
        : settings(std::move(s)),
          verify(std::move(verify_arg)),
          tls(std::move(tls_config)),
          client(make(true)),
          loop(make_loop_path(*client, settings)) {}
    PyAsyncClient(const PyAsyncClient&) = delete;
    PyAsyncClient& operator=(const PyAsyncClient&) = delete;
    ~PyAsyncClient() {
        if (stale()) {  // the parent's: left alone (its sockets, and the event loop registrations, are shared)
            (void)client.release();
            leak(std::move(loop));
        } else {
            detach_loop_path(*loop);
        }
    }

    // Loading a large CA bundle takes a while: without the GIL, unless it must stay held (renew()).
    std::unique_ptr<bc::AsyncClient> make(bool release_gil) const {
        bc::IoThread& io = io_thread();
        const bc::Timeouts t = timeouts_of(settings);
        std::optional<py::gil_scoped_release> nogil;
        if (release_gil) nogil.emplace();
        return std::make_unique<bc::AsyncClient>(
            io, t, tls, static_cast<std::size_t>(settings.max_connections.value_or(0)), settings.proxy);
    }

    const ClientSettings settings;
    py::object verify;
    const bc::TlsConfig tls;
    std::unique_ptr<bc::AsyncClient> client;
    std::shared_ptr<LoopPath> loop;
    std::atomic<std::uint64_t> generation{fork_generation()};
    std::mutex renewing;
    std::atomic<bool> closed{false};

    bool stale() const { return generation.load(std::memory_order_relaxed) != fork_generation(); }

    bc::AsyncClient& open() {
        if (closed.load()) throw std::runtime_error("AsyncClient is closed");
        if (stale()) {  // in a forked child: a new C++ client (and IoThread) instead of the parent's, leaked
            std::lock_guard<std::mutex> lock(renewing);
            if (stale()) {
                auto fresh = make(false);
                (void)client.release();
                client = std::move(fresh);
                leak(std::move(loop));
                loop = make_loop_path(*client, settings);
                generation.store(fork_generation(), std::memory_order_relaxed);
            }
        }
        return *client;
    }

    void close() {
        closed.store(true);
        if (stale()) return;
        client->close();
        close_loop_path(*loop);
    }

private:
    static void leak(std::shared_ptr<LoopPath> p) { (void)new std::shared_ptr<LoopPath>(std::move(p)); }
};

}  // namespace beast_py
