// The loop path's pool of connections, its deadlines (one timer for all) and the hooks the loop calls back
// (aio_loop.cpp says how the path works).
#include "aio_loop_path.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace beast_py {

Names* names = nullptr;  // made at import (register_loop_path)

namespace {

PyObject* run_hook(PyObject* capsule, PyObject*);
PyMethodDef hook_def = {"beast_client_hook", run_hook, METH_NOARGS, nullptr};
constexpr const char* hook_name = "beast_client._core.hook";

}  // namespace

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

Op LoopPath::take_op(const std::shared_ptr<Conn>& c) {
    Op op = std::move(*c->op);
    c->op.reset();
    const auto it = std::find(busy_.begin(), busy_.end(), c);
    if (it != busy_.end()) {
        *it = std::move(busy_.back());
        busy_.pop_back();
    }
    return op;
}

py::object LoopPath::result(bc::LoopConnection& lc, const Op& op) {
    switch (op.want) {
        case Want::status: return py::int_(lc.status());
        case Want::length: return py::make_tuple(lc.status(), lc.body_bytes());
        case Want::phases: {
            // the exchange's phases (send, wait, receive) and, when this request opened its connection, the
            // connecting's (on the IoThread: dns, connect)
            bc::Phases p = lc.phases().value_or(bc::Phases{});
            p.dns = op.connected.dns;
            p.resolved = op.connected.resolved;
            p.connect = op.connected.connect;
            return py::make_tuple(lc.status(), lc.body_bytes(), phases_dict(p, false));
        }
        case Want::body: break;
    }
    return py::make_tuple(lc.status(), py::bytes(lc.body()));
}

// The future may have been cancelled meanwhile (its task then calls abandon(), too late to matter).
void LoopPath::resolve(const py::object& future, const py::object& value) {
    PyObject* r = PyObject_CallMethodOneArg(future.ptr(), names->set_result, value.ptr());
    if (r == nullptr)
        PyErr_Clear();  // InvalidStateError: cancelled
    else
        Py_DECREF(r);
}

void LoopPath::reject(const py::object& future, std::exception_ptr e) {
    py::object exc = exception_object(e);
    PyObject* r = PyObject_CallMethodOneArg(future.ptr(), names->set_exception, exc.ptr());
    if (r == nullptr)
        PyErr_Clear();
    else
        Py_DECREF(r);
}

// A connection back from a request: to the first request waiting for its origin, else idle (those of the least
// recently used origin closed beyond Client::pool_size origins, as the Client's pool does).
void LoopPath::release(const std::shared_ptr<Conn>& c) {
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
void LoopPath::drop(const std::shared_ptr<Conn>& c) {
    try {
        unwatch(*c);
    } catch (py::error_already_set&) {
    }
    c->lc.reset();
    if (c->origin) freed(*c->origin);
    c->origin = nullptr;
}

// An idle connection the server closed: out of the pool.
void LoopPath::forget_idle(const std::shared_ptr<Conn>& c) {
    if (!c->origin) return;
    auto& idle = c->origin->idle;
    idle.erase(std::remove(idle.begin(), idle.end(), c), idle.end());
    drop(c);
}

// A connection of `o` closed (or never opened): the first waiting request may open one.
void LoopPath::freed(Origin& o) {
    if (o.counted > 0) --o.counted;
    if (o.waiting.empty() || closing_) return;
    Op next = std::move(o.waiting.front());
    o.waiting.pop_front();
    ++o.counted;
    open(o, std::move(next));
}

void LoopPath::close_idle() {
    for (const auto& o : origins_) {
        auto idle = std::move(o->idle);
        o->idle.clear();
        for (const auto& c : idle) drop(c);
    }
}

// The timer goes off by `at` (it is moved only when `at` comes before it).
void LoopPath::arm(Clock::time_point at) {
    if (at == never || at >= armed_ || !loop_) return;
    if (timer_) call_quietly(timer_.ptr(), names->cancel);
    if (!timer_hook_) timer_hook_ = make_hook(Hook{Hook::Kind::timer, weak_from_this(), {}, {}, {}});
    const double delay = std::max(0.0, std::chrono::duration<double>(at - Clock::now()).count()) + 0.001;
    try {
        timer_ = call_method(loop_.ptr(), names->call_later, py::float_(delay).ptr(), timer_hook_.ptr());
        armed_ = at;
    } catch (py::error_already_set&) {  // (a closed loop: nothing of it runs any more)
        timer_ = py::object();
        armed_ = never;
    }
}

void LoopPath::on_timer() {
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
            reject(op.future,
                   std::make_exception_ptr(bc::TimeoutError(
                       "no free connection to http://" + op.req->where + " within " + waited + ": max_connections (" +
                       std::to_string(max_connections_) + ") requests were in flight to it all along")));
        }
    }
    arm(next);
}

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

}  // namespace

}  // namespace beast_py
