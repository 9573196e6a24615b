// The asyncio side: RawAsyncClient's requests are the C++ AsyncClient's operations (beast_client/async_client.hpp)
// on one IoThread per process; their results go back to the event loop without that thread ever touching
// Python. Each event loop gets one Completer (python/beast_client/__init__.py keeps them): a queue of finished
// operations and a non-blocking pipe whose read end is registered with `loop.add_reader(c.fileno(), c.drain)`.
// An operation's callback, on the IoThread, queues its outcome (C++ values only) and writes one byte when the
// queue was empty; drain() runs on the loop's thread, with the GIL, and resolves the asyncio futures. A future
// cancelled by its task (task.cancel(), asyncio.wait_for) cancels its operation: the connection is closed.
//
// The IoThread is started by the process's first RawAsyncClient and stopped by an atexit handler (Python's own,
// before the interpreter finalizes: nothing of it then runs while OpenSSL and the runtime are torn down). A child
// made by fork() has no such thread: its clients make a new one and new C++ clients at their first use there,
// leaving the parent's alone (never closed nor destroyed: their sockets and epoll instance are the parent's).
#include "aio.hpp"

#include "beast_client/async_client.hpp"
#include "types.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace beast_py {

namespace {

// ---- the process's IoThread ---------------------------------------------------------------------------------

struct ProcessIo {
    std::uint64_t generation;
    bc::IoThread thread;
};

std::atomic<ProcessIo*> current_io{nullptr};

}  // namespace

// Never deleted: a forked child leaves the parent's alone (its thread does not exist there), and at exit the
// thread is only stopped (stop_io).
bc::IoThread& io_thread() {
    ProcessIo* io = current_io.load(std::memory_order_acquire);
    if (io && io->generation == fork_generation()) return io->thread;
    static std::mutex starting;  // held with the GIL (a client's constructor or first use): no fork meanwhile
    std::lock_guard<std::mutex> lock(starting);
    io = current_io.load(std::memory_order_acquire);
    if (io && io->generation == fork_generation()) return io->thread;
    io = new ProcessIo{fork_generation(), {}};
    current_io.store(io, std::memory_order_release);
    return io->thread;
}

namespace {

void stop_io() {
    ProcessIo* io = current_io.load(std::memory_order_acquire);
    if (!io || io->generation != fork_generation()) return;
    py::gil_scoped_release nogil;
    io->thread.stop();
}

// ---- the completer ----------------------------------------------------------------------------------------

// A finished operation, without any Python object in it.
struct Outcome {
    enum class Kind { status, length, phases, body, response, stream, chunk, flag } kind = Kind::status;
    int status = 0;
    std::uint64_t bytes = 0;
    std::optional<bc::Phases> phases;  // Kind::phases
    bc::Response response;
    std::unique_ptr<bc::AsyncResponseStream> stream;
    std::optional<std::string> chunk;
    std::exception_ptr error;
};

// The queue and the pipe, shared by a Completer and the callbacks of its operations (which may outlive it).
struct Wakeup {
    Wakeup() {
        if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
    }
    ~Wakeup() {
        ::close(fds[0]);
        ::close(fds[1]);
    }
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;

    // On the IoThread: queue the outcome and wake the loop (once per batch). A full pipe means a wake-up is
    // pending anyway.
    void push(std::uint64_t id, Outcome outcome) {
        bool first = false;
        {
            std::lock_guard<std::mutex> lock(mutex);
            done.emplace_back(id, std::move(outcome));
            first = done.size() == 1;
        }
        if (first) {
            const char byte = 1;
            [[maybe_unused]] const auto n = ::write(fds[1], &byte, 1);
        }
    }

    int fds[2] = {-1, -1};
    std::mutex mutex;
    std::vector<std::pair<std::uint64_t, Outcome>> done;
};

}  // namespace

py::object exception_object(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (py::error_already_set& err) {
        return err.value();
    } catch (...) {
        py::detail::try_translate_exceptions();  // errors.cpp's translators: sets the Python error
    }
    py::error_already_set err;  // fetches it
    return err.value();
}

namespace {

struct PyAsyncStream;

struct PyCompleter {
    std::shared_ptr<Wakeup> wakeup = std::make_shared<Wakeup>();
    // A request's future and, once started, its operation (what abandon() cancels).
    struct Pending {
        py::object future;
        bc::AsyncHandle op;
    };
    std::mutex mutex;  // the futures: a free-threaded CPython may register and drain on two threads
    std::unordered_map<std::uint64_t, Pending> pending;
    std::uint64_t next_id = 0;

    // A future of the running loop, registered under a fresh id.
    std::pair<std::uint64_t, py::object> add() {
        PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> get_running_loop;
        auto& loop_of =
            get_running_loop
                .call_once_and_store_result([] { return py::module_::import("asyncio").attr("get_running_loop"); })
                .get_stored();
        py::object fut = loop_of().attr("create_future")();
        std::lock_guard<std::mutex> lock(mutex);
        const std::uint64_t id = next_id++;
        pending.emplace(id, Pending{fut, {}});
        return {id, fut};
    }

    py::object forget(std::uint64_t id) {
        std::lock_guard<std::mutex> lock(mutex);
        const auto it = pending.find(id);
        if (it == pending.end()) return py::object();
        py::object fut = std::move(it->second.future);
        pending.erase(it);
        return fut;
    }

    // The task awaiting `future` was cancelled (the shared layer calls this): its operation is cancelled, its
    // connection closed. False when the request had already ended.
    bool abandon(const py::object& future) {
        bc::AsyncHandle op;
        {
            std::lock_guard<std::mutex> lock(mutex);
            const auto it = std::find_if(pending.begin(), pending.end(),
                                         [&](const auto& entry) { return entry.second.future.is(future); });
            if (it == pending.end()) return false;
            op = std::move(it->second.op);
            pending.erase(it);
        }
        if (op) op->cancel();
        return true;
    }

    void drain();
};

// RawStream: AsyncClient.stream()'s response, its body read through next_chunk().
struct PyAsyncStream {
    std::unique_ptr<bc::AsyncResponseStream> stream;
    py::object headers;
    std::uint64_t generation = fork_generation();

    PyAsyncStream() = default;
    PyAsyncStream(const PyAsyncStream&) = delete;
    PyAsyncStream& operator=(const PyAsyncStream&) = delete;
    ~PyAsyncStream() {
        if (stale()) (void)stream.release();  // the parent's connection: left alone
    }
    bool stale() const { return generation != fork_generation(); }
};

// Registers a future with `completer_obj` and starts the operation (start(wakeup, id) -> its handle), which the
// Completer's abandon() cancels: the task awaiting the future calls it when cancelled (a done callback on every
// future would cost each request a callback the loop schedules and runs).
template <class Start>
py::object submit(const py::object& completer_obj, Start&& start) {
    PyCompleter& c = completer_obj.cast<PyCompleter&>();
    auto [id, fut] = c.add();
    bc::AsyncHandle op;
    try {
        op = start(c.wakeup, id);
    } catch (...) {
        c.forget(id);
        throw;
    }
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        const auto it = c.pending.find(id);
        if (it != c.pending.end()) it->second.op = std::move(op);  // else drained already (a free-threaded loop)
    }
    return fut;
}

// What the IoThread's callbacks do: queue the outcome.
auto on_fetch(std::shared_ptr<Wakeup> w, std::uint64_t id, Outcome::Kind kind) {
    return [w = std::move(w), id, kind](bc::FetchResult r, std::exception_ptr e) {
        Outcome o;
        o.kind = kind;
        o.status = r.status;
        o.bytes = r.body_bytes;
        o.phases = r.phases;
        o.error = e;
        w->push(id, std::move(o));
    };
}

auto on_response(std::shared_ptr<Wakeup> w, std::uint64_t id, Outcome::Kind kind) {
    return [w = std::move(w), id, kind](bc::Response r, std::exception_ptr e) {
        Outcome o;
        o.kind = kind;
        o.response = std::move(r);
        o.error = e;
        w->push(id, std::move(o));
    };
}

void PyCompleter::drain() {
    // empty the pipe *before* taking the queue: a push after the take then wakes us again
    char buf[256];
    while (::read(wakeup->fds[0], buf, sizeof buf) > 0) {
    }
    std::vector<std::pair<std::uint64_t, Outcome>> done;
    {
        std::lock_guard<std::mutex> lock(wakeup->mutex);
        done.swap(wakeup->done);
    }
    for (auto& [id, o] : done) {
        py::object fut = forget(id);
        if (!fut || fut.attr("done")().cast<bool>()) continue;  // cancelled meanwhile
        try {
            if (o.error) {
                fut.attr("set_exception")(exception_object(o.error));
                continue;
            }
            py::object value;
            switch (o.kind) {
                case Outcome::Kind::status: value = py::int_(o.status); break;
                case Outcome::Kind::length: value = py::make_tuple(o.status, o.bytes); break;
                case Outcome::Kind::phases:
                    value = py::make_tuple(o.status, o.bytes, phases_dict(o.phases.value_or(bc::Phases{}), false));
                    break;
                case Outcome::Kind::body: value = py::make_tuple(o.response.status, py::bytes(o.response.body)); break;
                case Outcome::Kind::response: value = py::cast(to_python(std::move(o.response))); break;
                case Outcome::Kind::stream: {
                    auto s = std::make_unique<PyAsyncStream>();
                    s->headers = py::cast(PyHeaders::from_bc(o.stream->headers()));
                    s->stream = std::move(o.stream);
                    value = py::cast(std::move(s));
                    break;
                }
                case Outcome::Kind::chunk: value = o.chunk ? py::object(py::bytes(*o.chunk)) : py::none(); break;
                case Outcome::Kind::flag: value = py::bool_(o.status != 0); break;
            }
            fut.attr("set_result")(value);
        } catch (py::error_already_set& e) {  // converting failed (memory): the future says so, the others go on
            fut.attr("set_exception")(e.value());
        }
    }
}

}  // namespace

std::pair<py::object, std::function<void(bool)>> flag_future(const py::object& completer) {
    PyCompleter& c = completer.cast<PyCompleter&>();
    auto [id, fut] = c.add();
    return {fut, [w = c.wakeup, id = id](bool value) {
                Outcome o;
                o.kind = Outcome::Kind::flag;
                o.status = value ? 1 : 0;
                w->push(id, std::move(o));
            }};
}

void register_aio(py::module_& m) {
    py::class_<PyCompleter>(m, "Completer", py::is_final(),
                            "Resolves the asyncio futures of one event loop (internal: beast_client.AsyncClient).")
        .def(py::init<>())
        .def(
            "fileno", [](const PyCompleter& c) { return c.wakeup->fds[0]; },
            "The descriptor to register with loop.add_reader.")
        .def("drain", &PyCompleter::drain, "Resolve every finished request's future (the add_reader callback).")
        .def("abandon", &PyCompleter::abandon, py::arg("future"),
             "The task awaiting `future` was cancelled: its request is cancelled. False when it had ended.")
        .def("__repr__", [](PyCompleter& c) {
            std::lock_guard<std::mutex> lock(c.mutex);
            return "<beast_client._core.Completer fd=" + std::to_string(c.wakeup->fds[0]) +
                   " pending=" + std::to_string(c.pending.size()) + ">";
        });

    py::class_<PyAsyncStream>(m, "RawStream", py::is_final(),
                              "RawAsyncClient.stream()'s response (internal: AsyncClient.stream).")
        .def_property_readonly("status", [](const PyAsyncStream& s) { return s.stream->status(); })
        .def_property_readonly("reason", [](const PyAsyncStream& s) { return latin1(s.stream->reason()); })
        .def_property_readonly("url", [](const PyAsyncStream& s) { return s.stream->url(); })
        .def_property_readonly("headers", [](const PyAsyncStream& s) { return s.headers; })
        .def(
            "next_chunk",
            [](PyAsyncStream& s, const py::object& completer) {
                if (s.stale())
                    throw std::runtime_error(
                        "this response was opened by the parent process before fork(); its connection is the "
                        "parent's: request it again in the child");
                return submit(completer, [&](std::shared_ptr<Wakeup> w, std::uint64_t id) {
                    return s.stream->next([w = std::move(w), id](std::optional<std::string> c, std::exception_ptr e) {
                        Outcome o;
                        o.kind = Outcome::Kind::chunk;
                        o.chunk = std::move(c);
                        o.error = e;
                        w->push(id, std::move(o));
                    });
                });
            },
            py::arg("completer"), "Future of the next piece of the body, None at its end (or once closed).")
        .def(
            "close",
            [](PyAsyncStream& s) {
                if (!s.stale()) s.stream->close();
            },
            "Drop the rest of the body (and its connection, unless it was read to its end). Idempotent.");

    py::class_<PyAsyncClient> cls(m, "RawAsyncClient", py::is_final(),
                                  "The asyncio client's requests, each a future of the running loop resolved through "
                                  "`completer` (use beast_client.AsyncClient).");
    cls.def(py::init([](const py::object& timeout, const py::object& verify, const py::object& connect_timeout,
                        const py::object& read_timeout, bool follow_redirects, int max_redirects,
                        const py::object& headers, bool decompress, const py::object& user_agent,
                        const py::object& cookies, const py::object& max_body_size, const py::object& max_connections,
                        bool trust_env, const py::object& proxy) {
                ClientSettings s =
                    client_settings(timeout, connect_timeout, read_timeout, follow_redirects, max_redirects, headers,
                                    decompress, user_agent, cookies, max_body_size, max_connections, trust_env, proxy);
                bc::TlsConfig tls = to_tls_config(verify);
                const std::string path = tls.ca_file;
                try {
                    return std::make_unique<PyAsyncClient>(std::move(s), std::move(tls), verify);
                } catch (const std::system_error& e) {  // the CA bundle cannot be opened: as open() reports it
                    raise_os_error(e, path);
                }
            }),
            py::arg("timeout") = py::none(), py::arg("verify") = true, py::kw_only(), py::arg("connect_timeout") = 10.0,
            py::arg("read_timeout") = 30.0, py::arg("follow_redirects") = true, py::arg("max_redirects") = 10,
            py::arg("headers") = py::none(), py::arg("decompress") = true, py::arg("user_agent") = py::none(),
            py::arg("cookies") = false, py::arg("max_body_size") = py::none(), py::arg("max_connections") = py::none(),
            py::arg("trust_env") = true, py::arg("proxy") = py::none());
    cls.def(
           "get",
           [](PyAsyncClient& self, const std::string& url, const py::object& completer) {
               bc::AsyncClient& c = self.open();
               return submit(completer, [&](std::shared_ptr<Wakeup> w, std::uint64_t id) {
                   return c.get(url, on_fetch(std::move(w), id, Outcome::Kind::status));
               });
           },
           py::arg("url"), py::arg("completer"), "Future of the status: GET, the whole body read.")
        .def(
            "fetch_len",
            [](PyAsyncClient& self, const std::string& url, const py::object& completer) {
                bc::AsyncClient& c = self.open();
                return submit(completer, [&](std::shared_ptr<Wakeup> w, std::uint64_t id) {
                    return c.get(url, on_fetch(std::move(w), id, Outcome::Kind::length));
                });
            },
            py::arg("url"), py::arg("completer"), "Future of (status, body bytes).")
        .def(
            "fetch_phases",
            [](PyAsyncClient& self, const std::string& url, const py::object& completer) {
                bc::AsyncClient& c = self.open();
                return submit(completer, [&](std::shared_ptr<Wakeup> w, std::uint64_t id) {
                    return c.get(url, on_fetch(std::move(w), id, Outcome::Kind::phases), true);
                });
            },
            py::arg("url"), py::arg("completer"),
            "Future of (status, body bytes, {phase: ns}): fetch_len(), with where the request's time went.")
        .def(
            "fetch",
            [](PyAsyncClient& self, const std::string& url, const py::object& completer, const std::string& method,
               const py::object& body) {
                bc::AsyncClient& c = self.open();
                if (!body.is_none() && (py::isinstance<py::str>(body) || !PyObject_CheckBuffer(body.ptr())))
                    throw py::type_error(std::string("body must be bytes-like or None, not ") +
                                         Py_TYPE(body.ptr())->tp_name);
                Body b;
                b.set(body);
                return submit(completer, [&](std::shared_ptr<Wakeup> w, std::uint64_t id) {
                    return c.request(method, url, {}, std::string(b.data()),
                                     on_response(std::move(w), id, Outcome::Kind::body));
                });
            },
            py::arg("url"), py::arg("completer"), py::kw_only(), py::arg("method") = "GET",
            py::arg("body") = py::none(),
            "Future of (status, body): method with body (bytes-like) as given, the whole body read.")
        .def(
            "request",
            [](PyAsyncClient& self, const std::string& method, const std::string& url, const py::object& completer,
               const py::object& params, const py::object& headers, const py::object& body, const py::object& json,
               const py::object& timeout, const py::object& follow_redirects) {
                bc::AsyncClient& c = self.open();
                auto upload = take_upload(body, json);
                Prepared p;
                prepare(p, self.settings, method, url, params, headers, upload ? py::none() : body, json, timeout,
                        follow_redirects, false);
                return submit(completer, [&](std::shared_ptr<Wakeup> w, std::uint64_t id) {
                    return c.send(p.method, p.url, std::move(p.headers), std::string(p.body.data()), p.options,
                                  on_response(std::move(w), id, Outcome::Kind::response), upload);
                });
            },
            py::arg("method"), py::arg("url"), py::arg("completer"), py::kw_only(), py::arg("params") = py::none(),
            py::arg("headers") = py::none(), py::arg("body") = py::none(), py::arg("json") = py::none(),
            py::arg("timeout") = py::none(), py::arg("follow_redirects") = py::none(),
            "Future of a Response (see Client.request; a RawUpload body is streamed, chunked).")
        .def(
            "stream",
            [](PyAsyncClient& self, const std::string& method, const std::string& url, const py::object& completer,
               const py::object& params, const py::object& headers, const py::object& body, const py::object& json,
               const py::object& timeout, const py::object& follow_redirects) {
                bc::AsyncClient& c = self.open();
                auto upload = take_upload(body, json);
                Prepared p;
                prepare(p, self.settings, method, url, params, headers, upload ? py::none() : body, json, timeout,
                        follow_redirects, false);
                return submit(completer, [&](std::shared_ptr<Wakeup> w, std::uint64_t id) {
                    return c.stream(
                        p.method, p.url, std::move(p.headers), std::string(p.body.data()), p.options,
                        [w = std::move(w), id](std::unique_ptr<bc::AsyncResponseStream> s, std::exception_ptr e) {
                            Outcome o;
                            o.kind = Outcome::Kind::stream;
                            o.stream = std::move(s);
                            o.error = e;
                            w->push(id, std::move(o));
                        },
                        upload);
                });
            },
            py::arg("method"), py::arg("url"), py::arg("completer"), py::kw_only(), py::arg("params") = py::none(),
            py::arg("headers") = py::none(), py::arg("body") = py::none(), py::arg("json") = py::none(),
            py::arg("timeout") = py::none(), py::arg("follow_redirects") = py::none(),
            "Future of a RawStream: the final response's head; its body read with next_chunk().")
        .def_property_readonly("timeout", [](const PyAsyncClient& c) { return c.settings.timeout; })
        .def_property_readonly("connect_timeout", [](const PyAsyncClient& c) { return c.settings.connect_timeout; })
        .def_property_readonly("read_timeout", [](const PyAsyncClient& c) { return c.settings.read_timeout; })
        .def_property_readonly("verify", [](const PyAsyncClient& c) { return c.verify; })
        .def_property_readonly("tls_info",
                               [](const PyAsyncClient& c) -> py::object {
                                   const auto info = c.stale() ? std::nullopt : c.client->tls_info();
                                   if (!info) return py::none();
                                   py::dict out;
                                   out["version"] = info->version;
                                   out["cipher"] = info->cipher;
                                   return std::move(out);
                               })
        .def_property_readonly("closed", [](const PyAsyncClient& c) { return c.closed.load(); })
        .def("close", &PyAsyncClient::close,
             "Close the idle connections, and the others as their requests end; later requests raise "
             "RuntimeError. Idempotent.")
        .def("__repr__", [](const PyAsyncClient& c) {
            char buf[64];
            if (c.settings.timeout)
                std::snprintf(buf, sizeof buf, "%g", *c.settings.timeout);
            else
                std::snprintf(buf, sizeof buf, "None");
            return std::string("<beast_client._core.RawAsyncClient timeout=") + buf +
                   (c.closed.load() ? " closed>" : ">");
        });

    register_loop_path(m);  // loop_get, loop_fetch_len, loop_fetch, loop_fetch_phases, abandon
    register_upload(m);     // RawUpload: a request's streamed body
    py::module_::import("atexit").attr("register")(py::cpp_function(&stop_io));
}

}  // namespace beast_py
