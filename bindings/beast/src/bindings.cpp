// beast_client._core: pybind11 bindings of the C++ client in cpp-beast/.
//
// The GIL is released around the network I/O (connect, TLS handshake, send, receive) and while a CA bundle is
// loaded. While a request waits, the client polls a cancel check every 50 ms; the check briefly re-acquires
// the GIL and runs PyErr_CheckSignals(), so Ctrl-C (or any signal handler that raises) interrupts a blocked
// get()/request() in the main thread promptly.
#include <pybind11/pybind11.h>  // first: it includes Python.h

#include "beast_client/client.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#ifdef BEAST_CLIENT_PROBE_CA_BUNDLES
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#endif

namespace py = pybind11;
namespace bc = beast_client;

#ifndef BEAST_CLIENT_PY_VERSION  // set by CMakeLists.txt from pyproject.toml's version: there is no other
#error "BEAST_CLIENT_PY_VERSION is not defined: build with scikit-build-core (pip install ./bindings/beast)"
#endif

namespace {

// beast_client.ProtocolError (subclass of OSError) and beast_client.TLSError (subclass of ConnectionError),
// created once at import.
PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> protocol_error_type;
PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> tls_error_type;

struct PyResponse {
    int status;
    py::dict headers;
    py::bytes body;
};

std::chrono::nanoseconds to_timeout(double seconds) {
    if (!std::isfinite(seconds) || !(seconds > 0))
        throw py::value_error("timeout must be a positive, finite number of seconds");
    const double capped = std::min(seconds, 3.0e8);  // ~10 years; the C++ client clamps there too
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(capped));
}

// `verify=` as in requests: True (the system's trust store), False (no verification), or the path of a CA
// bundle (str or os.PathLike; bytes paths work too). Anything else is a TypeError; an empty path a ValueError.
#ifdef BEAST_CLIENT_PROBE_CA_BUNDLES
// verify=True in the manylinux wheel, whose OpenSSL is linked statically: its compiled-in default paths
// (OPENSSLDIR /etc/ssl: /etc/ssl/cert.pem and the hashed /etc/ssl/certs) are Debian's and Alpine's layout, not
// every distribution's. As Go's crypto/x509 and rustls-native-certs do, the first readable CA bundle of a list
// of well-known locations is the system's trust store; SSL_CERT_FILE / SSL_CERT_DIR, when set, win (OpenSSL's
// default paths read them), and OpenSSL's default paths are the fallback when no bundle is found. Looked up
// once per process. (A build against the system's shared OpenSSL, e.g. from the sdist, does not define
// BEAST_CLIENT_PROBE_CA_BUNDLES: that OpenSSL's defaults are the distribution's own.)
const std::string& system_ca_bundle() {
    static const std::string path = [] {
        if (std::getenv(X509_get_default_cert_file_env()) || std::getenv(X509_get_default_cert_dir_env()))
            return std::string();
        static const char* const bundles[] = {
            "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Gentoo, Arch, Alpine
            "/etc/pki/tls/certs/ca-bundle.crt",                   // Fedora, RHEL, CentOS, Amazon Linux
            "/etc/ssl/ca-bundle.pem",                             // openSUSE, SLES
            "/etc/pki/tls/cacert.pem",                            // OpenELEC
            "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL 7+, Fedora (the extracted bundle)
            "/etc/ssl/cert.pem",                                  // Alpine, Arch, Void
        };
        for (const char* bundle : bundles) {
            struct stat st {};
            if (::stat(bundle, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && ::access(bundle, R_OK) == 0)
                return std::string(bundle);
        }
        return std::string();
    }();
    return path;
}
#endif

bc::TlsConfig to_tls_config(const py::object& verify) {
#ifdef BEAST_CLIENT_PROBE_CA_BUNDLES
    if (verify.ptr() == Py_True) return bc::TlsConfig{true, system_ca_bundle()};
#endif
    if (PyBool_Check(verify.ptr())) return bc::TlsConfig{verify.ptr() == Py_True, {}};
    if (!py::isinstance<py::str>(verify) && !py::isinstance<py::bytes>(verify) &&
        !PyObject_HasAttrString(verify.ptr(), "__fspath__"))
        throw py::type_error(std::string("verify must be True, False or the path of a CA bundle (str or "
                                         "os.PathLike), not ") +
                             Py_TYPE(verify.ptr())->tp_name);
    auto path = py::reinterpret_steal<py::object>(PyOS_FSPath(verify.ptr()));
    if (!path) throw py::error_already_set();
    if (py::isinstance<py::str>(path)) {  // to the file system's encoding (surrogateescape), as open() does
        path = py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(path.ptr()));
        if (!path) throw py::error_already_set();
    }
    std::string bytes = path.cast<std::string>();
    if (bytes.empty()) throw py::value_error("verify: the CA bundle path is empty");
    if (bytes.find('\0') != std::string::npos) throw py::value_error("verify: embedded null character in the path");
    return bc::TlsConfig{true, std::move(bytes)};
}

// The Python Client: the C++ client plus the Python-level "closed" state (as in reqwest_client: after
// close(), requests raise RuntimeError).
struct PyClient {
    PyClient(double timeout, bc::TlsConfig tls, py::object verify_arg)
        : timeout_s(timeout), verify(std::move(verify_arg)), client(make_client(timeout, std::move(tls))) {}

    // Without the GIL: loading a large CA bundle takes a while. (C++17: the prvalue initializes the member.)
    static bc::Client make_client(double timeout, bc::TlsConfig tls) {
        const auto t = to_timeout(timeout);
        py::gil_scoped_release nogil;
        return bc::Client(t, std::move(tls));
    }

    double timeout_s;
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

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

// Runs `call(cancel_check)` with or without the GIL. A signal handler that raised (KeyboardInterrupt)
// cancels the request; the Python exception is re-raised once the C++ call has unwound.
template <class Call>
auto run_interruptible(bool release_gil, Call&& call) -> decltype(call(bc::CancelCheck{})) {
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

// str -> UTF-8; a str that cannot be encoded (a lone surrogate) raises UnicodeEncodeError (a ValueError)
std::string utf8(const py::handle& text) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return std::string(data, static_cast<std::size_t>(size));
}

bc::Headers to_headers(const py::object& headers) {
    bc::Headers out;
    if (headers.is_none()) return out;
    if (!py::hasattr(headers, "items")) throw py::type_error("headers must be a mapping of str to str");
    for (const auto& item : headers.attr("items")()) {
        if (!py::isinstance<py::tuple>(item)) throw py::type_error("headers must be a mapping of str to str");
        const auto pair = py::reinterpret_borrow<py::tuple>(item);
        if (pair.size() != 2 || !py::isinstance<py::str>(pair[0]) || !py::isinstance<py::str>(pair[1]))
            throw py::type_error("headers must be a mapping of str to str");
        out.emplace_back(utf8(pair[0]), utf8(pair[1]));
    }
    return out;
}

std::string to_body(const py::object& body) {
    if (body.is_none()) return {};
    if (py::isinstance<py::bytes>(body)) return body.cast<std::string>();
    if (py::isinstance<py::str>(body) || !PyObject_CheckBuffer(body.ptr()))
        throw py::type_error(std::string("body must be bytes (or another bytes-like object), not ") +
                             Py_TYPE(body.ptr())->tp_name);
    Py_buffer view;
    if (PyObject_GetBuffer(body.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
    std::string out(static_cast<const char*>(view.buf), static_cast<std::size_t>(view.len));
    PyBuffer_Release(&view);
    return out;
}

PyResponse to_python(bc::Response&& r) {
    PyResponse out{r.status, py::dict(), py::bytes(r.body.data(), r.body.size())};
    for (auto& [name, value] : r.headers) {
        std::string key = name;
        for (char& c : key) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
        // header bytes are decoded as Latin-1 (never fails), as http.client does
        py::str v = py::reinterpret_steal<py::str>(
            PyUnicode_DecodeLatin1(value.data(), static_cast<Py_ssize_t>(value.size()), nullptr));
        if (!v) throw py::error_already_set();
        py::str k = py::reinterpret_steal<py::str>(
            PyUnicode_DecodeLatin1(key.data(), static_cast<Py_ssize_t>(key.size()), nullptr));
        if (!k) throw py::error_already_set();
        if (out.headers.contains(k)) {
            out.headers[k] = py::str(out.headers[k]) + py::str(", ") + v;  // repeated field: join, RFC 9110 5.3
        } else {
            out.headers[k] = v;
        }
    }
    return out;
}

void translate(std::exception_ptr p) {
    try {
        if (p) std::rethrow_exception(p);
    } catch (const bc::InvalidUrl& e) {
        py::set_error(PyExc_ValueError, e.what());
    } catch (const bc::TimeoutError& e) {
        py::set_error(PyExc_TimeoutError, e.what());
    } catch (const bc::TLSError& e) {
        py::set_error(tls_error_type.get_stored(), e.what());
    } catch (const bc::ConnectionError& e) {
        switch (e.kind()) {
            case bc::ConnectionError::Kind::refused: py::set_error(PyExc_ConnectionRefusedError, e.what()); break;
            case bc::ConnectionError::Kind::reset: py::set_error(PyExc_ConnectionResetError, e.what()); break;
            default: py::set_error(PyExc_ConnectionError, e.what()); break;
        }
    } catch (const bc::ProtocolError& e) {
        py::set_error(protocol_error_type.get_stored(), e.what());
    } catch (const bc::Cancelled& e) {  // cancelled without a pending Python exception
        py::set_error(PyExc_KeyboardInterrupt, e.what());
    } catch (const bc::Error& e) {
        py::set_error(PyExc_OSError, e.what());
    } catch (const bc::ConcurrentUse& e) {
        py::set_error(PyExc_RuntimeError, e.what());
    }
}

}  // namespace

PYBIND11_MODULE(_core, m, py::mod_gil_not_used()) {
    m.doc() = "Boost.Beast HTTP/1.1 client (C++), with the GIL released during I/O";
    m.attr("__version__") = BEAST_CLIENT_PY_VERSION;
    m.attr("boost_version") = bc::library_version();

    protocol_error_type.call_once_and_store_result([&]() -> py::object {
        auto type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
            "beast_client.ProtocolError", "The server sent a malformed HTTP response (a subclass of OSError).",
            PyExc_OSError, nullptr));
        if (!type) throw py::error_already_set();
        return type;
    });
    m.attr("ProtocolError") = protocol_error_type.get_stored();
    tls_error_type.call_once_and_store_result([&]() -> py::object {
        auto type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
            "beast_client.TLSError",
            "A TLS failure (a subclass of ConnectionError): the server's certificate is untrusted, expired or not\n"
            "for this host name / IP address, or the handshake failed (no common protocol, an alert, an\n"
            "https:// URL to a plain-HTTP server).",
            PyExc_ConnectionError, nullptr));
        if (!type) throw py::error_already_set();
        return type;
    });
    m.attr("TLSError") = tls_error_type.get_stored();
    py::register_local_exception_translator(translate);

    py::class_<PyResponse> response_cls(m, "Response", "A complete HTTP response (returned by Client.request).");
    response_cls
        .def_property_readonly(
            "status", [](const PyResponse& r) { return r.status; }, "The status code.")
        .def_property_readonly(
            "headers",
            [](const PyResponse& r) {
                auto copy = py::reinterpret_steal<py::dict>(PyDict_Copy(r.headers.ptr()));
                if (!copy) throw py::error_already_set();
                return copy;
            },
            "A new dict on each access: lower-cased names, repeated fields joined with ', '.")
        .def_property_readonly(
            "body", [](const PyResponse& r) { return r.body; }, "The whole body.")
        .def("__repr__", [](const PyResponse& r) {
            return "<beast_client.Response status=" + std::to_string(r.status) +
                   " body=" + std::to_string(py::len(r.body)) + " bytes>";
        });
    response_cls.attr("__module__") = "beast_client";

    // dynamic_attr: instances take arbitrary attributes (a __dict__), like plain Python objects
    py::class_<PyClient> client_cls(
        m, "Client", py::dynamic_attr(),
        "HTTP/1.1 client with one keep-alive connection (Boost.Beast). Not for concurrent\n"
        "use: a second thread calling into a busy Client gets RuntimeError; use one per thread.");
    client_cls
        .def(py::init([](double timeout, const py::object& verify) {
                 to_timeout(timeout);  // ValueError before anything else
                 bc::TlsConfig tls = to_tls_config(verify);
                 const std::string path = tls.ca_file;
                 try {
                     return std::make_unique<PyClient>(timeout, std::move(tls), verify);
                 } catch (const std::system_error& e) {  // the CA bundle cannot be opened: as open() reports it
                     const int err = e.code().value();
                     const auto filename = py::reinterpret_steal<py::object>(PyUnicode_DecodeFSDefault(path.c_str()));
                     if (!filename) throw py::error_already_set();
                     // OSError(errno, strerror, filename) is FileNotFoundError, PermissionError, ... by errno
                     py::object exc = py::reinterpret_borrow<py::object>(PyExc_OSError)(
                         err, std::generic_category().message(err), filename);
                     PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
                     throw py::error_already_set();
                 }
             }),
             py::arg("timeout") = 30.0, py::arg("verify") = true,
             "timeout: seconds allowed for each whole request (connect, TLS handshake, send, receive the\n"
             "whole body), > 0.\n"
             "verify (https:// URLs), as in requests: True = the system's trust store; a path (str or\n"
             "os.PathLike) = trust the CA certificates in this PEM file (or c_rehash directory) instead;\n"
             "False = no verification at all (UNSAFE: anyone on the path can impersonate the server).\n"
             "A CA bundle that cannot be opened raises FileNotFoundError / PermissionError (OSError);\n"
             "one without any PEM certificate ValueError; a verify of another type TypeError.")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__",
             [](PyClient& c, const py::args&) {
                 c.close();
                 return false;
             })
        .def("close", &PyClient::close,
             "Close the connection. Idempotent; later requests raise RuntimeError. A request running in\n"
             "another thread finishes first.")
        .def_property_readonly("closed", [](const PyClient& c) { return c.closed.load(); })
        .def_property_readonly(
            "timeout", [](const PyClient& c) { return c.timeout_s; }, "The per-request timeout, seconds.")
        .def_property_readonly(
            "verify", [](const PyClient& c) { return c.verify; }, "The verify argument, as given.")
        .def_property_readonly(
            "tls_info",
            [](const PyClient& c) -> py::object {
                const auto info = c.client.tls_info();
                if (!info) return py::none();
                py::dict out;
                out["version"] = info->version;
                out["cipher"] = info->cipher;
                return std::move(out);
            },
            "{'version': 'TLSv1.3', 'cipher': 'TLS_AES_256_GCM_SHA384'} of the most recently opened\n"
            "connection (kept after it closed; OpenSSL's names); None before the first connection and when\n"
            "it was plain http.")
        .def(
            "get",
            [](PyClient& self, const std::string& url, bool release_gil) {
                bc::Client& c = self.open();
                PyClient::Finish finish{self};
                return run_interruptible(release_gil, [&](const bc::CancelCheck& check) { return c.get(url, check); });
            },
            py::arg("url"), py::kw_only(), py::arg("release_gil") = true,
            "GET url, read the whole body (counted in last_body_bytes, not kept) and return the status.\n"
            "release_gil=False runs the very same code with the GIL held (to demonstrate the effect).")
        .def(
            "fetch_len",
            [](PyClient& self, const std::string& url, bool release_gil) {
                bc::Client& c = self.open();
                PyClient::Finish finish{self};
                const int status =
                    run_interruptible(release_gil, [&](const bc::CancelCheck& check) { return c.get(url, check); });
                return py::make_tuple(status, c.last_body_bytes());
            },
            py::arg("url"), py::kw_only(), py::arg("release_gil") = true,
            "GET url, read the whole body, return (status, body bytes).")
        .def(
            "request",
            [](PyClient& self, const std::string& method, const std::string& url, const py::object& headers,
               const py::object& body, bool release_gil) {
                bc::Client& c = self.open();
                const bc::Headers h = to_headers(headers);
                const std::string b = to_body(body);
                PyClient::Finish finish{self};
                bc::Response r = run_interruptible(
                    release_gil, [&](const bc::CancelCheck& check) { return c.request(method, url, h, b, check); });
                return to_python(std::move(r));
            },
            py::arg("method"), py::arg("url"), py::kw_only(), py::arg("headers") = py::none(),
            py::arg("body") = py::none(), py::arg("release_gil") = true,
            "Send any request and return the complete Response (GIL released during I/O by default).")
        .def_property_readonly(
            "last_body_bytes", [](const PyClient& c) { return c.client.last_body_bytes(); },
            "Body bytes received by the last get()/fetch_len()/request() (for a failed\n"
            "request: what arrived before it failed).")
        .def_property_readonly(
            "_connections_opened", [](const PyClient& c) { return c.client.connections_opened(); },
            "Connections opened so far (diagnostics; not part of the stable API).")
        .def("__repr__", [](const PyClient& c) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%g", c.timeout_s);
            std::string verify;
            if (!(PyBool_Check(c.verify.ptr()) && c.verify.ptr() == Py_True))
                verify = " verify=" + py::repr(c.verify).cast<std::string>();
            return std::string("<beast_client.Client timeout=") + buf + verify + (c.closed.load() ? " closed>" : ">");
        });
    client_cls.attr("__module__") = "beast_client";
}
