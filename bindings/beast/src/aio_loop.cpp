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
//
// Here: the requests and the loop. The LoopPath class is in aio_loop_path.hpp, its pool, its deadlines and the hooks
// the loop calls in aio_loop_pool.cpp, RawAsyncClient's methods in aio_loop_api.cpp.
#include "aio_loop_path.hpp"

#include <pythread.h>

#include <algorithm>
#include <utility>

namespace beast_py {

// RawAsyncClient.loop_*(): a future of the running loop (a new reference); None when the request is not this
// path's (the IoThread's path takes it); throws (InvalidUrl, ..., py::error_already_set).
PyObject* LoopPath::submit(Want want, std::string_view method, std::string_view url, std::string_view body) {
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
bool LoopPath::abandon(PyObject* future) {
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
void LoopPath::close() {
    if (mine()) {
        closing_ = true;
        close_idle();
    } else {
        closing_requested_.store(true);
        if (!loop_ || interpreter_finalizing()) return;
        try {  // the loop's thread does it (at once, if the loop runs; a closed loop refuses: nothing to do)
            call_method(loop_.ptr(), names->call_soon_threadsafe,
                        make_hook(Hook{Hook::Kind::wake, weak_from_this(), {}, {}, {}}).ptr());
        } catch (py::error_already_set&) {
        }
    }
}

// The client's end: every connection closed, requests in flight abandoned; the C++ client is not used again.
// In another thread than the path's, with its loop open, that happens on the loop's thread (the path is kept
// alive until then, by the hook that does it).
void LoopPath::detach() {
    if (client_.exchange(nullptr) == nullptr) return;
    if (!mine() && loop_ && !interpreter_finalizing()) {
        try {
            Hook h{Hook::Kind::cleanup, weak_from_this(), {}, {}, shared_from_this()};
            call_method(loop_.ptr(), names->call_soon_threadsafe, make_hook(std::move(h)).ptr());
            return;
        } catch (py::error_already_set&) {  // the loop is closed: nothing of it runs any more
        }
    }
    finish();
}

// detach()'s work, on the path's thread (or with its loop closed).
void LoopPath::finish() {
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

// A hook's call, on the loop's thread.
void LoopPath::on_hook(const Hook& h) {
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

void LoopPath::drain_inbox() {
    if (!inbox_) return;
    for (const auto& done : inbox_->take())
        if (done.fd >= 0) ::close(done.fd);
}

// In the path's thread (or before any thread has it).
bool LoopPath::mine() const {
    const unsigned long owner = owner_.load(std::memory_order_relaxed);
    return owner == 0 || owner == PyThread_get_thread_ident();
}

// A close() from another thread takes effect in the path's.
void LoopPath::closed_elsewhere() {
    if (!closing_requested_.load(std::memory_order_relaxed) || !closing_requested_.exchange(false)) return;
    closing_ = true;
    close_idle();
}

// The running loop (RuntimeError without one). CPython 3.11's asyncio.get_running_loop() makes a getpid()
// system call each time (a loop inherited through fork() is not running); its record of the running loop, an
// object in the thread's dict, is the same object for as long as one loop runs in the thread, so the loop it
// returned is remembered with that record and asked again only when the record changes. (From 3.12 on it
// makes no system call: it is always asked.)
py::object LoopPath::running_loop() {
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
bool LoopPath::move_to(const py::object& running) {
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
        if (inbox_watched_ && !closed) call_quietly(loop_.ptr(), names->remove_reader, py::int_(inbox_->fds[0]).ptr());
        inbox_watched_ = false;
    }
    loop_ = running;
    return true;
}

std::size_t LoopPath::in_flight() const {
    std::size_t n = busy_.size() + connecting_.size();
    for (const auto& o : origins_) n += o->waiting.size();
    return n;
}

void LoopPath::abandon_all() {
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

// The request of (method, url, body length): made once, then re-used while the same one is asked for; null
// for a URL only the IoThread's path takes (https://, a proxy).
std::shared_ptr<const bc::LoopRequest> LoopPath::target(std::string_view method, std::string_view url,
                                                        std::size_t length) {
    if (target_.url != url || target_.method != method || target_.length != length) {
        auto made = client_.load()->loop_request(method, url, length);  // throws for a bad URL or method
        target_.req = made ? std::make_shared<const bc::LoopRequest>(std::move(*made)) : nullptr;
        target_.url.assign(url.data(), url.size());
        target_.method.assign(method.data(), method.size());
        target_.length = length;
    }
    return target_.req;
}

Origin& LoopPath::origin_of(const bc::Url& u) {
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
void LoopPath::dispatch(Op op) {
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
void LoopPath::open(Origin& o, Op op) {
    try {
        if (!inbox_) inbox_ = std::make_shared<Inbox>();
        if (!inbox_watched_) {
            if (!inbox_hook_) inbox_hook_ = make_hook(Hook{Hook::Kind::inbox, weak_from_this(), {}, inbox_, {}});
            call_method(loop_.ptr(), names->add_reader, py::int_(inbox_->fds[0]).ptr(), inbox_hook_.ptr());
            inbox_watched_ = true;
        }
        bc::AsyncClient* client = client_.load();
        if (client == nullptr) throw std::runtime_error("AsyncClient is closed");
        if (op.want == Want::phases)
            op.connecting = client->connect_recording(
                *op.req, [inbox = inbox_, id = op.id](int fd, bc::Phases phases, std::exception_ptr e) {
                    inbox->push({id, fd, e, phases});
                });
        else
            op.connecting = client->connect(*op.req, [inbox = inbox_, id = op.id](int fd, std::exception_ptr e) {
                inbox->push({id, fd, e, {}});
            });
    } catch (...) {
        freed(o);
        return reject(op.future, std::current_exception());
    }
    const std::uint64_t id = op.id;
    connecting_.emplace(id, std::move(op));
}

void LoopPath::on_inbox() {
    for (auto& done : inbox_->take()) {
        const auto it = connecting_.find(done.op);
        if (it == connecting_.end()) {  // abandoned meanwhile
            if (done.fd >= 0) ::close(done.fd);
            continue;
        }
        Op op = std::move(it->second);
        connecting_.erase(it);
        op.connecting.reset();
        op.connected.dns += done.phases.dns;  // a retry's second connection adds up
        op.connected.connect += done.phases.connect;
        op.connected.resolved = op.connected.resolved || done.phases.resolved;
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
void LoopPath::run(const std::shared_ptr<Conn>& c, Op op) {
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
    step(c, c->lc->start(*o.req, o.body, o.want == Want::body, timeouts_, o.start, may_retry, o.want == Want::phases));
}

void LoopPath::watch(const std::shared_ptr<Conn>& c) {
    if (c->watched.ptr() == loop_.ptr()) return;
    if (!c->on_read) {
        c->on_read = make_hook(Hook{Hook::Kind::read, weak_from_this(), c, {}, {}});
        c->on_write = make_hook(Hook{Hook::Kind::write, weak_from_this(), c, {}, {}});
    }
    call_method(loop_.ptr(), names->add_reader, py::int_(c->lc->fd()).ptr(), c->on_read.ptr());
    c->watched = loop_;
}

// What a connection's request does after a step of it.
void LoopPath::step(const std::shared_ptr<Conn>& c, Step s) {
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
            py::object value = result(*c->lc, op);
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

}  // namespace beast_py
