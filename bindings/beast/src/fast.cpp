// Client.get(), Client.fetch_len() and Client.fetch_phases(), the benchmark's calls, as CPython methods of the
// vectorcall convention (METH_FASTCALL | METH_KEYWORDS) instead of pybind11-dispatched ones: no argument tuple, no
// overload resolution or default-argument handling, the URL read from the str object without a copy, the result built
// directly. That is most of what a call costs on top of the C++ client's get(). They do what every other
// method does (client.cpp): the same PyClient, run_interruptible (the GIL released, Ctrl-C delivered), the
// exceptions of the registered translators; arguments as pybind11 took them (url: str or bytes, positional
// or by name; release_gil: keyword-only, converted as pybind11 converts a bool).
#include "fast.hpp"

#include "types.hpp"

#include <cstddef>
#include <stdexcept>
#include <string_view>

#ifdef __GLIBCXX__
#include <cxxabi.h>
#endif

namespace beast_py {

namespace {

const py::detail::type_info* client_info = nullptr;  // Client's, looked up once at import

// The PyClient of `self` (a Client, or an instance of a subclass of it), or nullptr with TypeError set.
PyClient* client_of(PyObject* self) {
    if (!PyObject_TypeCheck(self, client_info->type)) {
        PyErr_Format(PyExc_TypeError, "a beast_client.Client is required, not '%s'", Py_TYPE(self)->tp_name);
        return nullptr;
    }
    auto v_h = reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder(client_info, false);
    if (!v_h || !v_h.holder_constructed()) {
        PyErr_SetString(PyExc_TypeError, "beast_client.Client.__init__() was not called");
        return nullptr;
    }
    return v_h.value_ptr<PyClient>();
}

// (url, *, release_gil=True); false with TypeError set.
bool parse(const char* name, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, std::string_view& url,
           bool& release_gil) {
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes 1 positional argument (url) but %zd were given", name, nargs);
        return false;
    }
    PyObject* url_obj = nargs == 1 ? args[0] : nullptr;
    PyObject* gil_obj = nullptr;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; ++i) {
        PyObject* key = PyTuple_GET_ITEM(kwnames, i);
        PyObject** slot = nullptr;
        if (PyUnicode_CompareWithASCIIString(key, "url") == 0)
            slot = &url_obj;
        else if (PyUnicode_CompareWithASCIIString(key, "release_gil") == 0)
            slot = &gil_obj;
        if (slot == nullptr) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", name, key);
            return false;
        }
        if (*slot != nullptr) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'", name, key);
            return false;
        }
        *slot = args[nargs + i];
    }
    if (url_obj == nullptr) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'url'", name);
        return false;
    }
    Py_ssize_t size = 0;
    if (PyUnicode_Check(url_obj)) {
        const char* data = PyUnicode_AsUTF8AndSize(url_obj, &size);  // kept with the str: no copy
        if (data == nullptr) {  // lone surrogates: refused as pybind11's std::string conversion refused them
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s(): url must be a str encodable as UTF-8 (or bytes)", name);
            return false;
        }
        url = std::string_view(data, static_cast<std::size_t>(size));
    } else if (PyBytes_Check(url_obj)) {
        url = std::string_view(PyBytes_AS_STRING(url_obj), static_cast<std::size_t>(PyBytes_GET_SIZE(url_obj)));
    } else {
        PyErr_Format(PyExc_TypeError, "%s(): url must be str, not '%s'", name, Py_TYPE(url_obj)->tp_name);
        return false;
    }
    if (gil_obj != nullptr) {
        py::detail::make_caster<bool> flag;
        if (!flag.load(gil_obj, true)) {
            PyErr_Format(PyExc_TypeError, "%s(): release_gil must be a bool, not '%s'", name,
                         Py_TYPE(gil_obj)->tp_name);
            return false;
        }
        release_gil = static_cast<bool>(flag);
    }
    return true;
}

// What a fetch returns: the status, (status, body bytes), or (status, body bytes, {phase: ns}).
enum class Result { status, length, phases };

// GET url, the whole body read: the status, (status, body bytes) or (status, body bytes, phases). The arguments
// (a str's UTF-8 or a bytes object) stay referenced by the caller for the whole call, also while the GIL is
// released.
PyObject* fetch(const char* name, Result result, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                PyObject* kwnames) {
    try {
        PyClient* pc = client_of(self);
        std::string_view url;
        bool release_gil = true;
        if (pc == nullptr || !parse(name, args, PyVectorcall_NARGS(nargs), kwnames, url, release_gil)) return nullptr;
        bc::Client& c = pc->open();
        PyClient::Finish finish{*pc};
        std::size_t body_bytes = 0;  // this call's, whatever other threads sharing the client do
        bc::Phases phases;
        bc::Phases* recording = result == Result::phases ? &phases : nullptr;
        const int status = run_interruptible(
            release_gil, [&](const bc::CancelCheck& check) { return c.get(url, body_bytes, check, recording); });
        if (result == Result::status) return PyLong_FromLong(status);
        PyObject* out = PyTuple_New(result == Result::phases ? 3 : 2);
        PyObject* code = PyLong_FromLong(status);
        PyObject* bytes = PyLong_FromSize_t(body_bytes);
        if (out == nullptr || code == nullptr || bytes == nullptr) {
            Py_XDECREF(out);
            Py_XDECREF(code);
            Py_XDECREF(bytes);
            return nullptr;
        }
        PyTuple_SET_ITEM(out, 0, code);
        PyTuple_SET_ITEM(out, 1, bytes);
        if (result == Result::phases) {
            try {
                PyTuple_SET_ITEM(out, 2, phases_dict(phases, false).release().ptr());
            } catch (...) {
                Py_DECREF(out);
                throw;
            }
        }
        return out;
    } catch (py::error_already_set& e) {  // e.g. KeyboardInterrupt from the cancel check
        e.restore();
        return nullptr;
#ifdef __GLIBCXX__
    } catch (abi::__forced_unwind&) {  // thread cancellation must unwind on
        throw;
#endif
    } catch (...) {  // the C++ client's errors: the translators of errors.cpp (and pybind11's)
        py::detail::try_translate_exceptions();
        return nullptr;
    }
}

PyObject* get(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return fetch("get", Result::status, self, args, nargs, kwnames);
}

PyObject* fetch_len(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return fetch("fetch_len", Result::length, self, args, nargs, kwnames);
}

PyObject* fetch_phases(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return fetch("fetch_phases", Result::phases, self, args, nargs, kwnames);
}

PyMethodDef methods[] = {
    {"get", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(get)), METH_FASTCALL | METH_KEYWORDS,
     "get($self, /, url, *, release_gil=True)\n--\n\n"
     "GET url, read the whole body (counted in last_body_bytes, not kept) and return the status.\n"
     "release_gil=False runs the very same code with the GIL held (to demonstrate the effect)."},
    {"fetch_len", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fetch_len)), METH_FASTCALL | METH_KEYWORDS,
     "fetch_len($self, /, url, *, release_gil=True)\n--\n\n"
     "GET url, read the whole body, return (status, body bytes)."},
    {"fetch_phases", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fetch_phases)),
     METH_FASTCALL | METH_KEYWORDS,
     "fetch_phases($self, /, url, *, release_gil=True)\n--\n\n"
     "fetch_len(url), also returning where the request's time went: (status, body bytes, {phase: ns}), the\n"
     "phases connect, tls, send, wait and receive (dns first when a host name was resolved) in nanoseconds."},
};

}  // namespace

void register_fast_path(py::module_& m) {
    client_info = py::detail::get_type_info(typeid(PyClient));
    if (client_info == nullptr) throw std::runtime_error("register_fast_path: Client is not registered yet");
    py::object cls = m.attr("Client");
    for (PyMethodDef& def : methods) {
        auto descr = py::reinterpret_steal<py::object>(PyDescr_NewMethod(client_info->type, &def));
        if (!descr) throw py::error_already_set();
        cls.attr(def.ml_name) = descr;
    }
}

}  // namespace beast_py
