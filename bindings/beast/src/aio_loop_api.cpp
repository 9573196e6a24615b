// RawAsyncClient's loop path methods (aio_loop.cpp says how the path works): loop_get, loop_fetch_len, loop_fetch
// and loop_fetch_phases as CPython vectorcall methods (as fast.cpp's Client.get: no argument tuple, the URL read from
// the str without a copy), abandon and _loop_requests; the module's set-up of the path.
#include "aio_loop_path.hpp"

namespace beast_py {

namespace {

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
PyObject* loop_fetch_phases(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    return submit("loop_fetch_phases", Want::phases, self, args, nargs);
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
    {"loop_fetch_phases", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(loop_fetch_phases)), METH_FASTCALL,
     "loop_fetch_phases($self, url, /)\n--\n\n"
     "fetch_phases(url) on the running loop's thread: a future of (status, body bytes, {phase: ns}), or None."},
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
