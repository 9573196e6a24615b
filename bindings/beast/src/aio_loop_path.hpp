// The loop path's parts, shared by aio_loop.cpp (how it works: the requests and the loop), aio_loop_pool.cpp (its
// pool, its deadlines and the hooks the loop calls) and aio_loop_api.cpp (RawAsyncClient's methods): the LoopPath
// class and what it keeps. Internal to those three files.
#pragma once

#include "aio.hpp"
#include "aio_loop.hpp"
#include "beast_client/loop_connection.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace beast_py {

using Clock = std::chrono::steady_clock;
using Step = bc::LoopConnection::Step;
constexpr Clock::time_point never = Clock::time_point::max();

// The Python names and functions the path calls, made at import (never freed).
struct Names {
    PyObject* create_future;
    PyObject* set_result;
    PyObject* set_exception;
    PyObject* add_reader;
    PyObject* remove_reader;
    PyObject* add_writer;
    PyObject* remove_writer;
    PyObject* call_later;
    PyObject* call_soon_threadsafe;
    PyObject* cancel;
    PyObject* is_closed;
    PyObject* running_key;       // CPython 3.11's record of a thread's running loop, in the thread's dict
    PyObject* get_running_loop;  // asyncio.get_running_loop
};
extern Names* names;

inline py::object call_method(PyObject* obj, PyObject* name) {
    PyObject* r = PyObject_CallMethodNoArgs(obj, name);
    if (r == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
}

template <class... Args>
py::object call_method(PyObject* obj, PyObject* name, Args... args) {
    PyObject* argv[] = {obj, args...};
    PyObject* r =
        PyObject_VectorcallMethod(name, argv, (sizeof...(Args) + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
    if (r == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
}

// A call whose failure matters to nobody (a loop already closed, say): its error dropped.
template <class... Args>
void call_quietly(PyObject* obj, PyObject* name, Args... args) {
    try {
        (void)call_method(obj, name, args...);
    } catch (py::error_already_set&) {
    }
}

enum class Want { status, length, body, phases };

struct Origin;

// A request of the path: its future, what it sends, when it started.
struct Op {
    std::uint64_t id = 0;
    py::object future;
    Want want = Want::status;
    std::shared_ptr<const bc::LoopRequest> req;
    std::string body;
    Clock::time_point start{};
    Clock::time_point wait_until = never;  // waiting for a free connection (max_connections): until then
    int attempt = 0;
    bc::AsyncHandle connecting;  // the IoThread is opening its connection
    bc::Phases connected;        // Want::phases: what opening its connection(s) took (dns, connect)
};

// A pooled connection.
struct Conn {
    std::unique_ptr<bc::LoopConnection> lc;  // null once closed
    Origin* origin = nullptr;
    py::object watched;    // the loop its socket is registered with (the reader), None when it is not
    bool writing = false;  // the writer is registered too (a request that did not go out whole)
    bool reused = false;   // it carried a request before
    std::optional<Op> op;
    py::object on_read, on_write;  // its hooks, made once
};

struct Origin {
    std::string host;
    std::uint16_t port = 0;
    std::size_t counted = 0;                  // connections open or being opened (max_connections bounds it)
    std::vector<std::shared_ptr<Conn>> idle;  // the most recently handed back last
    std::deque<Op> waiting;                   // requests waiting for a connection, first come first served
    std::uint64_t used = 0;

    bool matches(const bc::Url& u) const { return u.port == port && u.host == host; }
};

// AsyncClient::connect()'s results, from the IoThread to the loop: a queue and a non-blocking pipe the loop watches
// (one byte per batch). Shared with the IoThread's callbacks, which may outlive the path.
struct Inbox {
    struct Connected {
        std::uint64_t op;
        int fd;
        std::exception_ptr error;
        bc::Phases phases;  // connect_recording()'s (Want::phases)
    };

    Inbox() {
        if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
    }
    ~Inbox() {
        for (const Connected& c : queue)
            if (c.fd >= 0) ::close(c.fd);
        ::close(fds[0]);
        ::close(fds[1]);
    }
    Inbox(const Inbox&) = delete;
    Inbox& operator=(const Inbox&) = delete;

    void push(Connected c) {  // the IoThread's
        bool first = false;
        {
            std::lock_guard<std::mutex> lock(mutex);
            queue.push_back(std::move(c));
            first = queue.size() == 1;
        }
        if (first) {
            const char byte = 1;
            [[maybe_unused]] const auto n = ::write(fds[1], &byte, 1);
        }
    }

    std::vector<Connected> take() {  // empties the pipe before the queue: a push after the take wakes the loop again
        char buf[64];
        while (::read(fds[0], buf, sizeof buf) > 0) {
        }
        std::vector<Connected> out;
        std::lock_guard<std::mutex> lock(mutex);
        out.swap(queue);
        return out;
    }

    int fds[2] = {-1, -1};
    std::mutex mutex;
    std::vector<Connected> queue;
};

// What a callable registered with the loop calls back (a PyCFunction over a capsule of this).
struct Hook {
    enum class Kind { read, write, timer, inbox, wake, cleanup } kind;
    std::weak_ptr<LoopPath> path;
    std::weak_ptr<Conn> conn;        // read, write
    std::shared_ptr<Inbox> inbox;    // inbox
    std::shared_ptr<LoopPath> keep;  // cleanup: the path of a client that ended in another thread, finished here
};

// A callable the loop calls back with no argument: what it does is the hook's (run_hook(), aio_loop_pool.cpp).
py::object make_hook(Hook h);

// Stops watching a connection's socket (on its loop's thread, or with that loop not running).
void unwatch(Conn& c);

class LoopPath : public std::enable_shared_from_this<LoopPath> {
public:
    LoopPath(bc::AsyncClient& client, const ClientSettings& s)
        : client_(&client),
          timeouts_(timeouts_of(s)),
          max_connections_(static_cast<std::size_t>(s.max_connections.value_or(0))) {}
    LoopPath(const LoopPath&) = delete;
    LoopPath& operator=(const LoopPath&) = delete;
    ~LoopPath() { finish(); }

    // RawAsyncClient.loop_*(): a future of the running loop (a new reference); None when the request is not this
    // path's (the IoThread's path takes it); throws (InvalidUrl, ..., py::error_already_set).
    PyObject* submit(Want want, std::string_view method, std::string_view url, std::string_view body);

    // The task awaiting `future` was cancelled: its request is abandoned and its connection closed. False when the
    // request is over already (or not this path's).
    bool abandon(PyObject* future);

    // RawAsyncClient.close(): the idle connections now in the path's thread (or before it has one); from another,
    // on the loop's thread (its thread alone touches the path), the others as their requests end.
    void close();

    // The client's end: every connection closed, requests in flight abandoned; the C++ client is not used again.
    // In another thread than the path's, with its loop open, that happens on the loop's thread (the path is kept
    // alive until then, by the hook that does it).
    void detach();

    // detach()'s work, on the path's thread (or with its loop closed).
    void finish();

    std::uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }

    // A hook's call, on the loop's thread.
    void on_hook(const Hook& h);

    void drain_inbox();

private:
    // ---- the running loop and the path's binding to it --------------------------------------------------------

    // In the path's thread (or before any thread has it).
    bool mine() const;

    // A close() from another thread takes effect in the path's.
    void closed_elsewhere();

    // The running loop (RuntimeError without one). CPython 3.11's asyncio.get_running_loop() makes a getpid()
    // system call each time (a loop inherited through fork() is not running); its record of the running loop, an
    // object in the thread's dict, is the same object for as long as one loop runs in the thread, so the loop it
    // returned is remembered with that record and asked again only when the record changes. (From 3.12 on it
    // makes no system call: it is always asked.)
    py::object running_loop();

    // The path follows the thread's running loop: its connections move there once the loop they were on has no
    // request in flight (a closed loop's never finish: abandoned). False: they stay (the IoThread takes this one).
    bool move_to(const py::object& running);

    std::size_t in_flight() const;

    void abandon_all();

    // ---- requests ------------------------------------------------------------------------------------------------

    // The request of (method, url, body length): made once, then re-used while the same one is asked for; null
    // for a URL only the IoThread's path takes (https://, a proxy).
    std::shared_ptr<const bc::LoopRequest> target(std::string_view method, std::string_view url, std::size_t length);

    Origin& origin_of(const bc::Url& u);

    // A connection for `op`: an idle one of its origin that is still usable, a new one within max_connections,
    // or a place in the origin's queue.
    void dispatch(Op op);

    // A new connection, from the IoThread (its socket then comes through the inbox: on_inbox()).
    void open(Origin& o, Op op);

    void on_inbox();

    // Starts `op` on `c`.
    void run(const std::shared_ptr<Conn>& c, Op op);

    void watch(const std::shared_ptr<Conn>& c);

    // What a connection's request does after a step of it.
    void step(const std::shared_ptr<Conn>& c, Step s);

    Op take_op(const std::shared_ptr<Conn>& c);

    static py::object result(bc::LoopConnection& lc, const Op& op);

    // The future may have been cancelled meanwhile (its task then calls abandon(), too late to matter).
    static void resolve(const py::object& future, const py::object& value);

    static void reject(const py::object& future, std::exception_ptr e);

    // ---- the pool ------------------------------------------------------------------------------------------------

    // A connection back from a request: to the first request waiting for its origin, else idle (those of the least
    // recently used origin closed beyond Client::pool_size origins, as the Client's pool does).
    void release(const std::shared_ptr<Conn>& c);

    // Closes a connection (no longer watched) and frees its place.
    void drop(const std::shared_ptr<Conn>& c);

    // An idle connection the server closed: out of the pool.
    void forget_idle(const std::shared_ptr<Conn>& c);

    // A connection of `o` closed (or never opened): the first waiting request may open one.
    void freed(Origin& o);

    void close_idle();

    // ---- the deadlines: one timer for all --------------------------------------------------------------------

    // The timer goes off by `at` (it is moved only when `at` comes before it).
    void arm(Clock::time_point at);

    void on_timer();

    std::atomic<bc::AsyncClient*> client_;  // null once detached
    const bc::Timeouts timeouts_;
    const std::size_t max_connections_;    // 0: no bound
    std::atomic<unsigned long> owner_{0};  // the thread the path belongs to (0: none yet)
    py::object loop_;                      // the loop it is on
    py::object seen_record_, seen_loop_;
    std::vector<std::unique_ptr<Origin>> origins_;
    std::vector<std::shared_ptr<Conn>> busy_;
    std::unordered_map<std::uint64_t, Op> connecting_;
    std::uint64_t next_id_ = 0;
    std::uint64_t tick_ = 0;
    std::atomic<std::uint64_t> requests_{0};
    bool closing_ = false;
    std::atomic<bool> closing_requested_{false};
    py::object timer_, timer_hook_;
    Clock::time_point armed_ = never;
    std::shared_ptr<Inbox> inbox_;
    py::object inbox_hook_;
    bool inbox_watched_ = false;
    struct {
        std::string url, method;
        std::size_t length = 0;
        std::shared_ptr<const bc::LoopRequest> req;
    } target_;
};

}  // namespace beast_py
