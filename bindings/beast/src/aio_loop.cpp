// RawAsyncClient's loop path (aio_loop.hpp): AsyncClient.get(), fetch_len() and fetch() over http:// on the running
// event loop's own thread, with no hand-off to another thread on a request's way. Each pooled connection is a
// beast_client::LoopConnection whose socket the loop watches (`loop.add_reader`, registered once per connection and
// loop): a request is a send() from the calling task, then on the loop's readiness a recv() and Boost.Beast's parser,
// and the asyncio future resolved right there. The IoThread only opens connections (AsyncClient::connect(): name
// resolution and connecting are asynchronous there; the socket comes back through a pipe the loop watches).
//
// The path's own pool: idle connections per origin (at most Client::pool_size origins'), max_connections per
// origin (a request finding them all busy waits for one, at most the connect timeout and what is left of the total
// timeout), the idle check before re-use and the one retry (LoopConnection). One timer (`loop.call_later`) serves
// every deadline of the path: armed for the nearest one, and only moved when a request's deadline comes before it
// (a keep-alive loop of requests arms it about once per timeout, not once per request).
//
// One thread: the path belongs to the first thread that uses it, and follows the loop running there (its
// connections move to the next loop once the previous one has no request in flight: loops used in turn, as
// asyncio.run() makes them). A request from another thread, an https:// URL and a proxied one take the IoThread's
// path (the caller's Python code does that when a loop_* method returns None). So the path's state is touched by its
// thread alone: no lock on a request's way. A close() or the client's end in another thread is done on the loop's
// thread (call_soon_threadsafe), unless that loop is closed.
//
// Cancellation: AsyncClient awaits the future in a `try`; a CancelledError there (task.cancel(), wait_for) calls
// abandon(future), which closes the request's connection. Fork: a child's client makes a new path (aio.hpp) and
// leaves the parent's alone (its sockets and the loop's epoll instance are the parent's too).
#include "aio_loop.hpp"

#include "aio.hpp"
#include "beast_client/loop_connection.hpp"

#include <fcntl.h>
#include <pythread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace beast_py {

namespace {

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
Names* names = nullptr;

py::object call_method(PyObject* obj, PyObject* name) {
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

enum class Want { status, length, body };

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

PyObject* run_hook(PyObject* capsule, PyObject*);
PyMethodDef hook_def = {"beast_client_hook", run_hook, METH_NOARGS, nullptr};
constexpr const char* hook_name = "beast_client._core.hook";

py::object make_hook(Hook h) {
    auto* raw = new Hook(std::move(h));
    PyObject* capsule = PyCapsule_New(
        raw, hook_name, [](PyObject* c) { delete static_cast<Hook*>(PyCapsule_GetPointer(c, hook_name)); });
    if (capsule == nullptr) {
        delete raw;
        throw py::error_already_set();
    }
    PyObject* fn = PyCFunction_New(&hook_def, capsule);
    Py_DECREF(capsule);
    if (fn == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(fn);
}

// Stops watching a connection's socket (on its loop's thread, or with that loop not running).
void unwatch(Conn& c) {
    if (c.watched && !interpreter_finalizing()) {
        PyObject* loop = c.watched.ptr();
        if (!call_method(loop, names->is_closed).cast<bool>()) {
            py::int_ fd(c.lc ? c.lc->fd() : -1);
            if (c.writing) call_quietly(loop, names->remove_writer, fd.ptr());
            call_quietly(loop, names->remove_reader, fd.ptr());
        }
    }
    c.watched = py::object();
    c.writing = false;
}

}  // namespace

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
    PyObject* submit(Want want, std::string_view method, std::string_view url, std::string_view body) {
        const unsigned long me = PyThread_get_thread_ident();
        const unsigned long owner = owner_.load(std::memory_order_relaxed);
        if (client_.load(std::memory_order_relaxed) == nullptr || (owner != 0 && owner != me)) Py_RETURN_NONE;
        py::object running = running_loop();
        std::shared_ptr<const bc::LoopRequest> req = target(method, url, body.size());
        if (!req) Py_RETURN_NONE;
        if (owner == 0) {  // the first thread to use it (another at the same moment: the IoThread's path)
            unsigned long none = 0;
            if (!owner_.compare_exchange_strong(none, me) && none != me) Py_RETURN_NONE;
        }
        if (running.ptr() != loop_.ptr() && !move_to(running)) Py_RETURN_NONE;
        closed_elsewhere();
        Op op;
        op.id = ++next_id_;
        op.want = want;
        op.req = std::move(req);
        if (!body.empty()) op.body.assign(body.data(), body.size());
        op.start = Clock::now();
        op.future = call_method(loop_.ptr(), names->create_future);
        PyObject* fut = op.future.inc_ref().ptr();
        requests_.fetch_add(1, std::memory_order_relaxed);
        dispatch(std::move(op));
        return fut;
    }

    // The task awaiting `future` was cancelled: its request is abandoned and its connection closed. False when the
    // request is over already (or not this path's).
    bool abandon(PyObject* future) {
        if (!mine()) return false;
        for (const auto& c : busy_)
            if (c->op && c->op->future.ptr() == future) {
                const std::shared_ptr<Conn> held = c;
                Op op = take_op(held);
                drop(held);
                return true;
            }
        for (auto it = connecting_.begin(); it != connecting_.end(); ++it)
            if (it->second.future.ptr() == future) {
                Op op = std::move(it->second);
                connecting_.erase(it);
                if (op.connecting) op.connecting->cancel();  // its socket, if it comes, is closed (on_inbox)
                freed(origin_of(op.req->url));
                return true;
            }
        for (const auto& o : origins_)
            for (auto it = o->waiting.begin(); it != o->waiting.end(); ++it)
                if (it->future.ptr() == future) {
                    o->waiting.erase(it);
                    return true;
                }
        return false;
    }

    // RawAsyncClient.close(): the idle connections now in the path's thread (or before it has one); from another,
    // on the loop's thread (its thread alone touches the path), the others as their requests end.
    void close() {
        if (mine()) {
            closing_ = true;
            close_idle();
        } else {
            closing_requested_.store(true);
            if (!loop_ || interpreter_finalizing()) return;
            try {  // the loop's thread does it (at once, if the loop runs; a closed loop refuses: nothing to do)
                call_method(loop_.ptr(), names->call_soon_threadsafe,
                            make_hook(Hook{Hook::Kind::wake, weak_from_this(), {}, {}}).ptr());
            } catch (py::error_already_set&) {
            }
        }
    }

    // The client's end: every connection closed, requests in flight abandoned; the C++ client is not used again.
    // In another thread than the path's, with its loop open, that happens on the loop's thread (the path is kept
    // alive until then, by the hook that does it).
    void detach() {
        if (client_.exchange(nullptr) == nullptr) return;
        if (!mine() && loop_ && !interpreter_finalizing()) {
            try {
                Hook h{Hook::Kind::cleanup, weak_from_this(), {}, {}};
                h.keep = shared_from_this();
                call_method(loop_.ptr(), names->call_soon_threadsafe, make_hook(std::move(h)).ptr());
                return;
            } catch (py::error_already_set&) {  // the loop is closed: nothing of it runs any more
            }
        }
        finish();
    }

    // detach()'s work, on the path's thread (or with its loop closed).
    void finish() {
        client_.store(nullptr);
        closing_ = true;
        std::vector<py::object> futures;  // released last: their finalizers may run Python code
        std::vector<std::shared_ptr<Conn>> conns;
        for (const auto& c : busy_) {
            if (c->op) futures.push_back(std::move(c->op->future));
            c->op.reset();
            conns.push_back(c);
        }
        busy_.clear();
        for (auto& [id, op] : connecting_) {
            if (op.connecting) op.connecting->cancel();
            futures.push_back(std::move(op.future));
        }
        connecting_.clear();
        for (const auto& o : origins_) {
            for (auto& op : o->waiting) futures.push_back(std::move(op.future));
            o->waiting.clear();
            for (auto& c : o->idle) conns.push_back(std::move(c));
            o->idle.clear();
        }
        const bool live = loop_ && !interpreter_finalizing();
        for (const auto& c : conns) {
            try {
                if (live) unwatch(*c);
            } catch (py::error_already_set&) {
            }
            c->lc.reset();
        }
        if (!live) return;
        try {
            if (timer_) call_quietly(timer_.ptr(), names->cancel);
            timer_ = py::object();
            if (inbox_watched_ && !call_method(loop_.ptr(), names->is_closed).cast<bool>())
                call_quietly(loop_.ptr(), names->remove_reader, py::int_(inbox_->fds[0]).ptr());
            inbox_watched_ = false;
        } catch (py::error_already_set&) {
        }
    }

    std::uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }

    // A hook's call, on the loop's thread.
    void on_hook(const Hook& h) {
        if (h.kind == Hook::Kind::cleanup) return finish();
        if (client_.load(std::memory_order_relaxed) == nullptr) {  // (finish() comes: the inbox is emptied meanwhile)
            if (h.kind == Hook::Kind::inbox) drain_inbox();
            return;
        }
        closed_elsewhere();
        switch (h.kind) {
            case Hook::Kind::read:
            case Hook::Kind::write: {
                std::shared_ptr<Conn> c = h.conn.lock();
                if (!c || !c->lc) return;
                if (!c->op) {  // idle: the server closed it, reset it or said something unasked
                    if (h.kind == Hook::Kind::read && !c->lc->idle_readable()) forget_idle(c);
                    return;
                }
                step(c, h.kind == Hook::Kind::read ? c->lc->readable() : c->lc->writable());
                return;
            }
            case Hook::Kind::timer: return on_timer();
            case Hook::Kind::inbox: return on_inbox();
            case Hook::Kind::wake:  // (closed_elsewhere() above)
            case Hook::Kind::cleanup: return;
        }
    }

    void drain_inbox() {
        if (!inbox_) return;
        for (const auto& done : inbox_->take())
            if (done.fd >= 0) ::close(done.fd);
    }

private:
    // ---- the running loop and the path's binding to it --------------------------------------------------------

    // In the path's thread (or before any thread has it).
    bool mine() const {
        const unsigned long owner = owner_.load(std::memory_order_relaxed);
        return owner == 0 || owner == PyThread_get_thread_ident();
    }

    // A close() from another thread takes effect in the path's.
    void closed_elsewhere() {
        if (!closing_requested_.load(std::memory_order_relaxed) || !closing_requested_.exchange(false)) return;
        closing_ = true;
        close_idle();
    }

    // The running loop (RuntimeError without one). CPython 3.11's asyncio.get_running_loop() makes a getpid()
    // system call each time (a loop inherited through fork() is not running); its record of the running loop, an
    // object in the thread's dict, is the same object for as long as one loop runs in the thread, so the loop it
    // returned is remembered with that record and asked again only when the record changes. (From 3.12 on it
    // makes no system call: it is always asked.)
    py::object running_loop() {
#if PY_VERSION_HEX < 0x030C0000
        PyObject* dict = PyThreadState_GetDict();                                               // borrowed
        PyObject* record = dict ? PyDict_GetItemWithError(dict, names->running_key) : nullptr;  // borrowed
        if (record != nullptr && record == seen_record_.ptr()) return seen_loop_;
        if (record == nullptr && PyErr_Occurred()) throw py::error_already_set();
#endif
        PyObject* loop = PyObject_CallNoArgs(names->get_running_loop);
        if (loop == nullptr) throw py::error_already_set();
        auto out = py::reinterpret_steal<py::object>(loop);
#if PY_VERSION_HEX < 0x030C0000
        if (record != nullptr) {
            seen_record_ = py::reinterpret_borrow<py::object>(record);
            seen_loop_ = out;
        }
#endif
        return out;
    }

    // The path follows the thread's running loop: its connections move there once the loop they were on has no
    // request in flight (a closed loop's never finish: abandoned). False: they stay (the IoThread takes this one).
    bool move_to(const py::object& running) {
        if (loop_) {
            const bool closed = call_method(loop_.ptr(), names->is_closed).cast<bool>();
            if (in_flight() > 0) {
                if (!closed) return false;
                abandon_all();
            }
            for (const auto& o : origins_)
                for (const auto& c : o->idle) {
                    if (closed) c->watched = py::object();  // its registrations went with it
                    unwatch(*c);
                }
            if (timer_ && !closed) call_quietly(timer_.ptr(), names->cancel);
            timer_ = py::object();
            armed_ = never;
            if (inbox_watched_ && !closed)
                call_quietly(loop_.ptr(), names->remove_reader, py::int_(inbox_->fds[0]).ptr());
            inbox_watched_ = false;
        }
        loop_ = running;
        return true;
    }

    std::size_t in_flight() const {
        std::size_t n = busy_.size() + connecting_.size();
        for (const auto& o : origins_) n += o->waiting.size();
        return n;
    }

    void abandon_all() {
        std::vector<py::object> futures;
        while (!busy_.empty()) {
            const std::shared_ptr<Conn> c = busy_.back();
            futures.push_back(take_op(c).future);
            c->watched = py::object();
            drop(c);
        }
        for (auto& [id, op] : connecting_) {
            if (op.connecting) op.connecting->cancel();
            futures.push_back(std::move(op.future));
            freed(origin_of(op.req->url));
        }
        connecting_.clear();
        for (const auto& o : origins_) {
            for (auto& op : o->waiting) futures.push_back(std::move(op.future));
            o->waiting.clear();
        }
    }

    // ---- requests ------------------------------------------------------------------------------------------------

    // The request of (method, url, body length): made once, then re-used while the same one is asked for; null
    // for a URL only the IoThread's path takes (https://, a proxy).
    std::shared_ptr<const bc::LoopRequest> target(std::string_view method, std::string_view url, std::size_t length) {
        if (target_.url != url || target_.method != method || target_.length != length) {
            auto made = client_.load()->loop_request(method, url, length);  // throws for a bad URL or method
            target_.req = made ? std::make_shared<const bc::LoopRequest>(std::move(*made)) : nullptr;
            target_.url.assign(url.data(), url.size());
            target_.method.assign(method.data(), method.size());
            target_.length = length;
        }
        return target_.req;
    }

    Origin& origin_of(const bc::Url& u) {
        for (const auto& o : origins_)
            if (o->matches(u)) return *o;
        if (origins_.size() >= 4 * bc::Client::pool_size)  // forget the records nobody counts or waits for
            origins_.erase(std::remove_if(origins_.begin(), origins_.end(),
                                          [](const auto& o) { return o->counted == 0 && o->waiting.empty(); }),
                           origins_.end());
        auto o = std::make_unique<Origin>();
        o->host = u.host;
        o->port = u.port;
        origins_.push_back(std::move(o));
        return *origins_.back();
    }

    // A connection for `op`: an idle one of its origin that is still usable, a new one within max_connections,
    // or a place in the origin's queue.
    void dispatch(Op op) {
        Origin& o = origin_of(op.req->url);
        while (!o.idle.empty()) {
            std::shared_ptr<Conn> c = std::move(o.idle.back());
            o.idle.pop_back();
            if (c->lc->usable(op.req->idempotent)) return run(c, std::move(op));
            drop(c);
        }
        if (max_connections_ == 0 || o.counted < max_connections_) {
            ++o.counted;
            return open(o, std::move(op));
        }
        auto until = never;
        if (timeouts_.connect) until = std::min(until, Clock::now() + *timeouts_.connect);
        if (timeouts_.total) until = std::min(until, op.start + *timeouts_.total);
        op.wait_until = until;
        o.waiting.push_back(std::move(op));
        arm(until);
    }

    // A new connection, from the IoThread (its socket then comes through the inbox: on_inbox()).
    void open(Origin& o, Op op) {
        try {
            if (!inbox_) inbox_ = std::make_shared<Inbox>();
            if (!inbox_watched_) {
                if (!inbox_hook_) inbox_hook_ = make_hook(Hook{Hook::Kind::inbox, weak_from_this(), {}, inbox_});
                call_method(loop_.ptr(), names->add_reader, py::int_(inbox_->fds[0]).ptr(), inbox_hook_.ptr());
                inbox_watched_ = true;
            }
            bc::AsyncClient* client = client_.load();
            if (client == nullptr) throw std::runtime_error("AsyncClient is closed");
            op.connecting = client->connect(*op.req, [inbox = inbox_, id = op.id](int fd, std::exception_ptr e) {
                inbox->push({id, fd, e});
            });
        } catch (...) {
            freed(o);
            return reject(op.future, std::current_exception());
        }
        const std::uint64_t id = op.id;
        connecting_.emplace(id, std::move(op));
    }

    void on_inbox() {
        for (auto& done : inbox_->take()) {
            const auto it = connecting_.find(done.op);
            if (it == connecting_.end()) {  // abandoned meanwhile
                if (done.fd >= 0) ::close(done.fd);
                continue;
            }
            Op op = std::move(it->second);
            connecting_.erase(it);
            op.connecting.reset();
            Origin& o = origin_of(op.req->url);
            if (done.error) {
                freed(o);
                reject(op.future, done.error);
                continue;
            }
            auto c = std::make_shared<Conn>();
            c->lc = std::make_unique<bc::LoopConnection>(done.fd, *op.req);
            c->origin = &o;
            run(c, std::move(op));
        }
    }

    // Starts `op` on `c`.
    void run(const std::shared_ptr<Conn>& c, Op op) {
        try {
            watch(c);
        } catch (...) {
            drop(c);
            return reject(op.future, std::current_exception());
        }
        const bool may_retry = c->reused && op.attempt == 0;
        c->op.emplace(std::move(op));
        busy_.push_back(c);
        const Op& o = *c->op;
        step(c, c->lc->start(*o.req, o.body, o.want == Want::body, timeouts_, o.start, may_retry));
    }

    void watch(const std::shared_ptr<Conn>& c) {
        if (c->watched.ptr() == loop_.ptr()) return;
        if (!c->on_read) {
            c->on_read = make_hook(Hook{Hook::Kind::read, weak_from_this(), c, {}});
            c->on_write = make_hook(Hook{Hook::Kind::write, weak_from_this(), c, {}});
        }
        call_method(loop_.ptr(), names->add_reader, py::int_(c->lc->fd()).ptr(), c->on_read.ptr());
        c->watched = loop_;
    }

    // What a connection's request does after a step of it.
    void step(const std::shared_ptr<Conn>& c, Step s) {
        switch (s) {
            case Step::read:
                if (c->writing) {
                    call_quietly(loop_.ptr(), names->remove_writer, py::int_(c->lc->fd()).ptr());
                    c->writing = false;
                }
                return arm(c->lc->deadline());
            case Step::write:
                if (!c->writing) {
                    try {
                        call_method(loop_.ptr(), names->add_writer, py::int_(c->lc->fd()).ptr(), c->on_write.ptr());
                    } catch (...) {
                        Op op = take_op(c);
                        drop(c);
                        return reject(op.future, std::current_exception());
                    }
                    c->writing = true;
                }
                return arm(c->lc->deadline());
            case Step::done: {
                Op op = take_op(c);
                c->reused = true;
                py::object value = result(*c->lc, op.want);
                release(c);
                return resolve(op.future, value);
            }
            case Step::failed: {
                Op op = take_op(c);
                const std::exception_ptr e = c->lc->error();
                drop(c);
                return reject(op.future, e);
            }
            case Step::retry: {  // the connection had been closed by the server: the request goes again, once
                Op op = take_op(c);
                drop(c);
                ++op.attempt;
                return dispatch(std::move(op));
            }
        }
    }

    Op take_op(const std::shared_ptr<Conn>& c) {
        Op op = std::move(*c->op);
        c->op.reset();
        const auto it = std::find(busy_.begin(), busy_.end(), c);
        if (it != busy_.end()) {
            *it = std::move(busy_.back());
            busy_.pop_back();
        }
        return op;
    }

    static py::object result(bc::LoopConnection& lc, Want want) {
        switch (want) {
            case Want::status: return py::int_(lc.status());
            case Want::length: return py::make_tuple(lc.status(), lc.body_bytes());
            case Want::body: break;
        }
        return py::make_tuple(lc.status(), py::bytes(lc.body()));
    }

    // The future may have been cancelled meanwhile (its task then calls abandon(), too late to matter).
    static void resolve(const py::object& future, const py::object& value) {
        PyObject* r = PyObject_CallMethodOneArg(future.ptr(), names->set_result, value.ptr());
        if (r == nullptr)
            PyErr_Clear();  // InvalidStateError: cancelled
        else
            Py_DECREF(r);
    }

    static void reject(const py::object& future, std::exception_ptr e) {
        py::object exc = exception_object(e);
        PyObject* r = PyObject_CallMethodOneArg(future.ptr(), names->set_exception, exc.ptr());
        if (r == nullptr)
            PyErr_Clear();
        else
            Py_DECREF(r);
    }

    // ---- the pool ------------------------------------------------------------------------------------------------

    // A connection back from a request: to the first request waiting for its origin, else idle (those of the least
    // recently used origin closed beyond Client::pool_size origins, as the Client's pool does).
    void release(const std::shared_ptr<Conn>& c) {
        if (!c->lc->open() || closing_) return drop(c);
        if (c->writing) {
            call_quietly(loop_.ptr(), names->remove_writer, py::int_(c->lc->fd()).ptr());
            c->writing = false;
        }
        Origin& o = *c->origin;
        if (!o.waiting.empty()) {
            Op next = std::move(o.waiting.front());
            o.waiting.pop_front();
            return run(c, std::move(next));
        }
        const bool first = o.idle.empty();
        o.used = ++tick_;
        o.idle.push_back(c);
        if (!first) return;
        std::size_t holding = 0;
        Origin* oldest = nullptr;
        for (const auto& other : origins_) {
            if (other->idle.empty()) continue;
            ++holding;
            if (!oldest || other->used < oldest->used) oldest = other.get();
        }
        if (holding > bc::Client::pool_size) {
            auto idle = std::move(oldest->idle);
            oldest->idle.clear();
            for (const auto& gone : idle) drop(gone);
        }
    }

    // Closes a connection (no longer watched) and frees its place.
    void drop(const std::shared_ptr<Conn>& c) {
        try {
            unwatch(*c);
        } catch (py::error_already_set&) {
        }
        c->lc.reset();
        if (c->origin) freed(*c->origin);
        c->origin = nullptr;
    }

    // An idle connection the server closed: out of the pool.
    void forget_idle(const std::shared_ptr<Conn>& c) {
        if (!c->origin) return;
        auto& idle = c->origin->idle;
        idle.erase(std::remove(idle.begin(), idle.end(), c), idle.end());
        drop(c);
    }

    // A connection of `o` closed (or never opened): the first waiting request may open one.
    void freed(Origin& o) {
        if (o.counted > 0) --o.counted;
        if (o.waiting.empty() || closing_) return;
        Op next = std::move(o.waiting.front());
        o.waiting.pop_front();
        ++o.counted;
        open(o, std::move(next));
    }

    void close_idle() {
        for (const auto& o : origins_) {
            auto idle = std::move(o->idle);
            o->idle.clear();
            for (const auto& c : idle) drop(c);
        }
    }

    // ---- the deadlines: one timer for all --------------------------------------------------------------------

    // The timer goes off by `at` (it is moved only when `at` comes before it).
    void arm(Clock::time_point at) {
        if (at == never || at >= armed_ || !loop_) return;
        if (timer_) call_quietly(timer_.ptr(), names->cancel);
        if (!timer_hook_) timer_hook_ = make_hook(Hook{Hook::Kind::timer, weak_from_this(), {}, {}});
        const double delay = std::max(0.0, std::chrono::duration<double>(at - Clock::now()).count()) + 0.001;
        try {
            timer_ = call_method(loop_.ptr(), names->call_later, py::float_(delay).ptr(), timer_hook_.ptr());
            armed_ = at;
        } catch (py::error_already_set&) {  // (a closed loop: nothing of it runs any more)
            timer_ = py::object();
            armed_ = never;
        }
    }

    void on_timer() {
        timer_ = py::object();
        armed_ = never;
        const auto now = Clock::now();
        auto next = never;
        for (const auto& c : std::vector<std::shared_ptr<Conn>>(busy_)) {
            if (!c->op) continue;
            const Step s = c->lc->expire(now);
            if (s == Step::failed)
                step(c, s);
            else
                next = std::min(next, c->lc->deadline());
        }
        for (const auto& o : origins_) {
            std::vector<Op> expired;
            for (auto it = o->waiting.begin(); it != o->waiting.end();) {
                if (it->wait_until <= now) {
                    expired.push_back(std::move(*it));
                    it = o->waiting.erase(it);
                } else {
                    next = std::min(next, it->wait_until);
                    ++it;
                }
            }
            for (auto& op : expired) {
                char waited[32];
                std::snprintf(waited, sizeof waited, "%.3g s", std::chrono::duration<double>(now - op.start).count());
                reject(op.future, std::make_exception_ptr(bc::TimeoutError(
                                      "no free connection to http://" + op.req->where + " within " + waited +
                                      ": max_connections (" + std::to_string(max_connections_) +
                                      ") requests were in flight to it all along")));
            }
        }
        arm(next);
    }

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

namespace {

PyObject* run_hook(PyObject* capsule, PyObject*) {
    auto* h = static_cast<Hook*>(PyCapsule_GetPointer(capsule, hook_name));
    if (h == nullptr) return nullptr;
    try {
        if (auto path = h->path.lock()) {
            path->on_hook(*h);
        } else if (h->kind == Hook::Kind::inbox && h->inbox) {  // (the path is gone: its sockets are closed)
            for (const auto& done : h->inbox->take())
                if (done.fd >= 0) ::close(done.fd);
        }
    } catch (py::error_already_set& e) {
        e.restore();
        return nullptr;
    } catch (...) {
        py::detail::try_translate_exceptions();
        return nullptr;
    }
    Py_RETURN_NONE;
}

const py::detail::type_info* client_info = nullptr;  // RawAsyncClient's

PyAsyncClient* client_of(PyObject* self) {
    if (!PyObject_TypeCheck(self, client_info->type)) {
        PyErr_Format(PyExc_TypeError, "a beast_client._core.RawAsyncClient is required, not '%s'",
                     Py_TYPE(self)->tp_name);
        return nullptr;
    }
    auto v_h = reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder(client_info, false);
    if (!v_h || !v_h.holder_constructed()) {
        PyErr_SetString(PyExc_TypeError, "RawAsyncClient.__init__() was not called");
        return nullptr;
    }
    return v_h.value_ptr<PyAsyncClient>();
}

// A str (its UTF-8, without a copy) or bytes argument, as the IoThread's methods take it (pybind11's std::string);
// false with TypeError set.
bool text_arg(const char* fn, const char* what, PyObject* obj, std::string_view& out) {
    Py_ssize_t size = 0;
    if (PyUnicode_Check(obj)) {
        const char* data = PyUnicode_AsUTF8AndSize(obj, &size);
        if (data == nullptr) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s(): %s must be a str encodable as UTF-8 (or bytes)", fn, what);
            return false;
        }
        out = std::string_view(data, static_cast<std::size_t>(size));
        return true;
    }
    if (PyBytes_Check(obj)) {
        out = std::string_view(PyBytes_AS_STRING(obj), static_cast<std::size_t>(PyBytes_GET_SIZE(obj)));
        return true;
    }
    PyErr_Format(PyExc_TypeError, "%s(): %s must be str, not '%s'", fn, what, Py_TYPE(obj)->tp_name);
    return false;
}

// loop_get(url) / loop_fetch_len(url) / loop_fetch(url, method, body): the future, or None (the IoThread's path).
PyObject* submit(const char* fn, Want want, PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    const Py_ssize_t n = PyVectorcall_NARGS(nargs);
    const Py_ssize_t expected = want == Want::body ? 3 : 1;
    if (n != expected) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments but %zd were given", fn, expected, n);
        return nullptr;
    }
    PyAsyncClient* c = client_of(self);
    std::string_view url, method = "GET";
    if (c == nullptr || !text_arg(fn, "url", args[0], url)) return nullptr;
    if (want == Want::body && !text_arg(fn, "method", args[1], method)) return nullptr;
    Py_buffer view{};
    bool viewed = false;
    try {
        c->open();  // RuntimeError once closed; a forked child's new path
        if (want == Want::body && args[2] != Py_None) {
            if (PyUnicode_Check(args[2]) || PyObject_GetBuffer(args[2], &view, PyBUF_SIMPLE) != 0) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "body must be bytes-like or None, not %s", Py_TYPE(args[2])->tp_name);
                return nullptr;
            }
            viewed = true;
        }
        const std::string_view body =
            viewed ? std::string_view(static_cast<const char*>(view.buf), static_cast<std::size_t>(view.len))
                   : std::string_view();
        PyObject* out = c->loop->submit(want, method, url, body);
        if (viewed) PyBuffer_Release(&view);
        return out;
    } catch (py::error_already_set& e) {
        if (viewed) PyBuffer_Release(&view);
        e.restore();
        return nullptr;
    } catch (...) {
        if (viewed) PyBuffer_Release(&view);
        py::detail::try_translate_exceptions();
        return nullptr;
    }
}

PyObject* loop_get(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    return submit("loop_get", Want::status, self, args, nargs);
}
PyObject* loop_fetch_len(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    return submit("loop_fetch_len", Want::length, self, args, nargs);
}
PyObject* loop_fetch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    return submit("loop_fetch", Want::body, self, args, nargs);
}

PyMethodDef methods[] = {
    {"loop_get", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(loop_get)), METH_FASTCALL,
     "loop_get($self, url, /)\n--\n\n"
     "get(url) on the running loop's thread: a future of the status, or None when the IoThread's path takes it."},
    {"loop_fetch_len", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(loop_fetch_len)), METH_FASTCALL,
     "loop_fetch_len($self, url, /)\n--\n\n"
     "fetch_len(url) on the running loop's thread: a future of (status, body bytes), or None."},
    {"loop_fetch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(loop_fetch)), METH_FASTCALL,
     "loop_fetch($self, url, method, body, /)\n--\n\n"
     "fetch(url, method=, body=) on the running loop's thread: a future of (status, body), or None."},
};

}  // namespace

std::shared_ptr<LoopPath> make_loop_path(bc::AsyncClient& client, const ClientSettings& settings) {
    return std::make_shared<LoopPath>(client, settings);
}

void close_loop_path(LoopPath& path) { path.close(); }
void detach_loop_path(LoopPath& path) { path.detach(); }

void register_loop_path(py::module_& m) {
    if (names == nullptr) {
        auto intern = [](const char* s) {
            PyObject* o = PyUnicode_InternFromString(s);
            if (o == nullptr) throw py::error_already_set();
            return o;
        };
        names = new Names{intern("create_future"),
                          intern("set_result"),
                          intern("set_exception"),
                          intern("add_reader"),
                          intern("remove_reader"),
                          intern("add_writer"),
                          intern("remove_writer"),
                          intern("call_later"),
                          intern("call_soon_threadsafe"),
                          intern("cancel"),
                          intern("is_closed"),
                          intern("__asyncio_running_event_loop__"),
                          py::object(py::module_::import("asyncio").attr("get_running_loop")).release().ptr()};
    }
    client_info = py::detail::get_type_info(typeid(PyAsyncClient));
    if (client_info == nullptr) throw std::runtime_error("register_loop_path: RawAsyncClient is not registered yet");
    auto cls = py::reinterpret_borrow<py::class_<PyAsyncClient>>(m.attr("RawAsyncClient"));
    for (PyMethodDef& def : methods) {
        auto descr = py::reinterpret_steal<py::object>(PyDescr_NewMethod(client_info->type, &def));
        if (!descr) throw py::error_already_set();
        cls.attr(def.ml_name) = descr;
    }
    cls.def(
        "abandon",
        [](PyAsyncClient& c, const py::object& future) { return !c.stale() && c.loop->abandon(future.ptr()); },
        py::arg("future"),
        "The task awaiting a loop_* future was cancelled: its request is abandoned and its connection closed (True), "
        "or it was over already (False).");
    cls.def_property_readonly(
        "_loop_requests", [](const PyAsyncClient& c) -> std::uint64_t { return c.stale() ? 0 : c.loop->requests(); },
        "How many requests took the loop path (a diagnostic).");
}

}  // namespace beast_py
