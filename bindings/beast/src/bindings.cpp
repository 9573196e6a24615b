// beast_client._core: pybind11 bindings of the C++ client in cpp-beast/.
//
// The GIL is released around the network I/O (connect, TLS handshake, send, receive) and while a CA bundle is
// loaded. While a request waits, the client polls a cancel check every 50 ms; the check briefly re-acquires
// the GIL and runs PyErr_CheckSignals(), so Ctrl-C (or any signal handler that raises) interrupts a blocked
// get()/request() in the main thread promptly.
#include <pybind11/pybind11.h>  // first: it includes Python.h
#include <pybind11/stl.h>       // std::optional<double> <-> float | None

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
PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> too_many_redirects_type;

std::chrono::nanoseconds to_timeout(double seconds, const char* what = "timeout") {
    if (!std::isfinite(seconds) || !(seconds > 0))
        throw py::value_error(std::string(what) + " must be a positive, finite number of seconds (or None)");
    const double capped = std::min(seconds, 3.0e8);  // ~10 years; the C++ client clamps there too
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(capped));
}

// None, or a positive finite number (int or float; not bool, not str)
std::optional<double> to_seconds(const py::object& value, const char* what) {
    if (value.is_none()) return std::nullopt;
    if (PyBool_Check(value.ptr()) || !(PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr())))
        throw py::type_error(std::string(what) + " must be a number of seconds or None, not " +
                             Py_TYPE(value.ptr())->tp_name);
    const double seconds = value.cast<double>();
    to_timeout(seconds, what);  // ValueError
    return seconds;
}

std::optional<std::chrono::nanoseconds> to_duration(std::optional<double> seconds, const char* what) {
    if (!seconds) return std::nullopt;
    return to_timeout(*seconds, what);
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
// Client(...)'s settings beyond the C++ client's (immutable after construction: read without a lock).
struct ClientSettings {
    std::optional<double> timeout, connect_timeout, read_timeout;
    bool follow_redirects = true;
    int max_redirects = 10;
    bool decompress = true;
    std::string user_agent;
    bc::Headers headers;  // the default headers
};

struct PyClient {
    PyClient(ClientSettings s, bc::TlsConfig tls, py::object verify_arg)
        : settings(std::move(s)), verify(std::move(verify_arg)), client(make_client(settings, std::move(tls))) {}

    // Without the GIL: loading a large CA bundle takes a while. (C++17: the prvalue initializes the member.)
    static bc::Client make_client(const ClientSettings& s, bc::TlsConfig tls) {
        const bc::Timeouts t{to_duration(s.timeout, "timeout"), to_duration(s.connect_timeout, "connect_timeout"),
                             to_duration(s.read_timeout, "read_timeout")};
        py::gil_scoped_release nogil;
        return bc::Client(t, std::move(tls));
    }

    const ClientSettings settings;
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

// A str of the request (header name or value, parameter); anything else is a TypeError naming `what`.
std::string text_of(const py::handle& value, const char* what) {
    if (!py::isinstance<py::str>(value))
        throw py::type_error(std::string(what) + " must be str, not " + Py_TYPE(value.ptr())->tp_name);
    return utf8(value);
}

// The (name, value) pairs of a Mapping (its items()) or of a sequence of 2-tuples / 2-lists.
template <class Each>
void for_each_pair(const py::object& obj, const char* what, Each&& each) {
    const bool mapping = py::hasattr(obj, "items") && !py::isinstance<py::str>(obj);
    if (!mapping && (py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj) || !py::hasattr(obj, "__iter__")))
        throw py::type_error(std::string(what) + " must be a mapping or a sequence of (name, value) pairs, not " +
                             Py_TYPE(obj.ptr())->tp_name);
    const py::object items = mapping ? obj.attr("items")() : obj;
    for (const auto& item : items) {
        if (!py::isinstance<py::tuple>(item) && !py::isinstance<py::list>(item))
            throw py::type_error(std::string(what) + ": each item must be a (name, value) pair, not " +
                                 Py_TYPE(item.ptr())->tp_name);
        const auto pair = py::reinterpret_borrow<py::sequence>(item);
        if (pair.size() != 2) throw py::type_error(std::string(what) + ": each item must be a (name, value) pair");
        each(py::object(pair[0]), py::object(pair[1]));
    }
}

bc::Headers to_headers(const py::object& headers) {
    bc::Headers out;
    if (headers.is_none()) return out;
    for_each_pair(headers, "headers", [&](const py::object& name, const py::object& value) {
        out.emplace_back(text_of(name, "a header name"), text_of(value, "a header value"));
    });
    return out;
}

// The client's default headers, then the request's: a request header replaces the defaults of its name.
bc::Headers merge_headers(const bc::Headers& defaults, bc::Headers request) {
    if (defaults.empty()) return request;
    bc::Headers out;
    const auto lower = [](std::string s) {
        for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
        return s;
    };
    for (const auto& d : defaults) {
        const std::string name = lower(d.first);
        const bool overridden =
            std::any_of(request.begin(), request.end(), [&](const auto& r) { return lower(r.first) == name; });
        if (!overridden) out.push_back(d);
    }
    for (auto& r : request) out.push_back(std::move(r));
    return out;
}

// params: str values as they are, int / float through str(); None skipped; a list / tuple repeats the name.
std::vector<std::pair<std::string, std::string>> to_params(const py::object& params) {
    std::vector<std::pair<std::string, std::string>> out;
    if (params.is_none()) return out;
    const auto scalar = [](const py::handle& v) -> std::string {
        if (py::isinstance<py::str>(v)) return utf8(v);
        if (PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) return utf8(py::str(v));
        throw py::type_error(std::string("params values must be str, int, float, None or a list of them, not ") +
                             Py_TYPE(v.ptr())->tp_name);
    };
    for_each_pair(params, "params", [&](const py::object& name, const py::object& value) {
        const std::string n = text_of(name, "a params name");
        if (value.is_none()) return;
        if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
            for (const auto& v : value)
                if (!v.is_none()) out.emplace_back(n, scalar(v));
            return;
        }
        out.emplace_back(n, scalar(value));
    });
    return out;
}

// The request body: a buffer-protocol object, held (not copied) while the request runs; an iterable of
// bytes-like objects or a binary file object (.read()), read into memory first (sent with Content-Length).
class Body {
public:
    Body() = default;
    Body(const Body&) = delete;
    Body& operator=(const Body&) = delete;
    ~Body() {
        if (has_view_) PyBuffer_Release(&view_);
    }

    void set(const py::object& body) {
        if (body.is_none()) return;
        if (py::isinstance<py::str>(body))
            throw py::type_error(
                "body must be bytes-like (or an iterable of bytes / a binary file), not str: encode it");
        if (PyObject_CheckBuffer(body.ptr())) {
            if (PyObject_GetBuffer(body.ptr(), &view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
            has_view_ = true;
            return;
        }
        if (py::hasattr(body, "read")) {
            append(body.attr("read")(), "body.read()");
            return;
        }
        if (!py::hasattr(body, "__iter__"))
            throw py::type_error(std::string("body must be bytes-like, an iterable of bytes-like objects or a binary "
                                             "file object, not ") +
                                 Py_TYPE(body.ptr())->tp_name);
        for (const auto& chunk : body) append(py::reinterpret_borrow<py::object>(chunk), "each chunk of body");
    }

    void set_owned(std::string data) { owned_ = std::move(data); }

    std::string_view data() const {
        if (has_view_) return {static_cast<const char*>(view_.buf), static_cast<std::size_t>(view_.len)};
        return owned_;
    }

private:
    void append(const py::object& chunk, const char* what) {
        if (py::isinstance<py::str>(chunk) || !PyObject_CheckBuffer(chunk.ptr()))
            throw py::type_error(std::string(what) + " must be bytes-like, not " + Py_TYPE(chunk.ptr())->tp_name);
        Py_buffer v;
        if (PyObject_GetBuffer(chunk.ptr(), &v, PyBUF_SIMPLE) != 0) throw py::error_already_set();
        owned_.append(static_cast<const char*>(v.buf), static_cast<std::size_t>(v.len));
        PyBuffer_Release(&v);
    }

    Py_buffer view_{};
    bool has_view_ = false;
    std::string owned_;
};

// header bytes are decoded as Latin-1 (never fails), as http.client does
py::str latin1(const std::string& s) {
    auto out =
        py::reinterpret_steal<py::str>(PyUnicode_DecodeLatin1(s.data(), static_cast<Py_ssize_t>(s.size()), nullptr));
    if (!out) throw py::error_already_set();
    return out;
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
};

PyResponse to_python(bc::Response&& r) {
    return PyResponse{r.status, std::move(r.reason), std::move(r.url), py::cast(PyHeaders::from_bc(r.headers)),
                      py::bytes(r.body.data(), r.body.size())};
}

// The charset parameter of a Content-Type ("utf-8" when there is none or Python does not know it).
std::string charset_of(const PyHeaders& h) {
    const py::object ct = h.joined(py::str("content-type"));
    if (!ct) return "utf-8";
    const py::module_ email = py::module_::import("email.message");
    py::object msg = email.attr("Message")();
    msg.attr("__setitem__")("content-type", ct);
    const py::object cs = msg.attr("get_param")("charset");
    if (cs.is_none() || !py::isinstance<py::str>(cs)) return "utf-8";
    const std::string name = cs.cast<std::string>();
    try {
        py::module_::import("codecs").attr("lookup")(name);
    } catch (const py::error_already_set&) {  // LookupError: an unknown charset
        return "utf-8";
    }
    return name;
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
    } catch (const bc::TooManyRedirects& e) {
        py::set_error(too_many_redirects_type.get_stored(), e.what());
    } catch (const bc::Cancelled& e) {  // cancelled without a pending Python exception
        py::set_error(PyExc_KeyboardInterrupt, e.what());
    } catch (const bc::Error& e) {
        py::set_error(PyExc_OSError, e.what());
    } catch (const bc::ConcurrentUse& e) {
        py::set_error(PyExc_RuntimeError, e.what());
    }
}

}  // namespace

// A request's arguments, converted with the GIL held; then sent without it.
struct Prepared {
    std::string method;
    std::string url;
    bc::Headers headers;
    Body body;
    bc::RequestOptions options;
};

void prepare(Prepared& p, const PyClient& self, const std::string& method, const std::string& url,
             const py::object& params, const py::object& headers, const py::object& body, const py::object& json,
             const py::object& timeout, const py::object& follow_redirects) {
    const ClientSettings& s = self.settings;
    p.method = method;
    p.url = bc::add_query(url, to_params(params));
    p.headers = merge_headers(s.headers, to_headers(headers));
    if (!body.is_none() && !json.is_none()) throw py::type_error("pass body or json, not both");
    if (!json.is_none()) {
        const py::object text = py::module_::import("json").attr("dumps")(json);
        p.body.set_owned(utf8(text));
        const bool typed = std::any_of(p.headers.begin(), p.headers.end(), [](const auto& h) {
            std::string n = h.first;
            for (char& c : n) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
            return n == "content-type";
        });
        if (!typed) p.headers.emplace_back("Content-Type", "application/json");
    } else {
        p.body.set(body);
    }
    const auto t = to_seconds(timeout, "timeout");
    p.options.timeout = t ? to_duration(t, "timeout") : std::nullopt;
    if (!follow_redirects.is_none() && !PyBool_Check(follow_redirects.ptr()))
        throw py::type_error("follow_redirects must be True, False or None");
    p.options.follow_redirects = follow_redirects.is_none() ? s.follow_redirects : follow_redirects.ptr() == Py_True;
    p.options.max_redirects = s.max_redirects;
    p.options.decompress = s.decompress;
    p.options.user_agent = s.user_agent;
}

// beast_client.StreamResponse: Client.stream()'s result. It keeps its Client alive (`client`).
struct PyStream {
    py::object client;  // the PyClient
    PyClient* owner;
    std::unique_ptr<bc::ResponseStream> stream;
    py::object headers;
    std::atomic<bool> closed{false};

    // the next chunk (GIL released while waiting), or a null object at the end
    py::object next_chunk() {
        if (closed.load()) return py::object();
        std::string chunk;
        PyClient::Finish finish{*owner};
        const bool more =
            run_interruptible(true, [&](const bc::CancelCheck& check) { return stream->next(chunk, check); });
        if (!more) return py::object();
        return py::bytes(chunk.data(), chunk.size());
    }

    void close() {
        if (closed.exchange(true)) return;
        stream->close();
    }
};

// iter_bytes()'s iterator
struct PyBytesIterator {
    py::object owner;  // the PyStream
};

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
    too_many_redirects_type.call_once_and_store_result([&]() -> py::object {
        auto type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
            "beast_client.TooManyRedirects",
            "More redirects than max_redirects (a subclass of OSError); the message names the last URL.", PyExc_OSError,
            nullptr));
        if (!type) throw py::error_already_set();
        return type;
    });
    m.attr("TooManyRedirects") = too_many_redirects_type.get_stored();
    py::register_local_exception_translator(translate);

    py::class_<PyHeaders> headers_cls(m, "Headers", py::is_final(),
                                      "Response headers: a case-insensitive, multi-valued mapping in the order\n"
                                      "received (a collections.abc.Mapping[str, str]). h[name] joins repeated\n"
                                      "fields with ', '; get_all(name) keeps them apart (Set-Cookie).");
    headers_cls
        .def(py::init([](const py::object& items) {
                 PyHeaders h;
                 if (!items.is_none())
                     for_each_pair(items, "headers", [&](const py::object& name, const py::object& value) {
                         text_of(name, "a header name");
                         text_of(value, "a header value");
                         h.add(py::str(name), py::str(value));
                     });
                 return h;
             }),
             py::arg("items") = py::none(), "From a mapping or a sequence of (name, value) pairs.")
        .def("__getitem__",
             [](const PyHeaders& h, const py::object& name) {
                 py::object v = h.joined(name);
                 if (!v) throw py::key_error(py::repr(name).cast<std::string>());
                 return v;
             })
        .def(
            "get",
            [](const PyHeaders& h, const py::object& name, const py::object& default_) {
                py::object v = h.joined(name);
                return v ? v : default_;
            },
            py::arg("key"), py::arg("default") = py::none(),
            "All values of the field joined with ', ', or default when it is absent.")
        .def(
            "get_all", [](const PyHeaders& h, const py::object& name) { return h.all(name); }, py::arg("key"),
            "Every value of the field, in order, never joined (an empty list when absent).")
        .def(
            "multi_items",
            [](const PyHeaders& h) {
                py::list out;
                for (const auto& [k, v] : h.fields) out.append(py::make_tuple(k, v));
                return out;
            },
            "Every field as (lower-case name, value), in the order received.")
        .def("__iter__", [](const PyHeaders& h) { return h.names.attr("__iter__")(); })
        .def("__len__", [](const PyHeaders& h) { return h.names.size(); })
        .def("__contains__", [](const PyHeaders& h, const py::object& name) { return !h.all(name).empty(); })
        .def("keys", [](py::object self) { return py::module_::import("collections.abc").attr("KeysView")(self); })
        .def("values", [](py::object self) { return py::module_::import("collections.abc").attr("ValuesView")(self); })
        .def("items", [](py::object self) { return py::module_::import("collections.abc").attr("ItemsView")(self); })
        .def("__eq__",
             [](const PyHeaders& h, const py::object& other) -> py::object {
                 if (py::isinstance<PyHeaders>(other)) {
                     const auto& o = other.cast<const PyHeaders&>();
                     if (o.fields.size() != h.fields.size()) return py::bool_(false);
                     for (std::size_t i = 0; i < h.fields.size(); ++i)
                         if (!h.fields[i].first.equal(o.fields[i].first) ||
                             !h.fields[i].second.equal(o.fields[i].second))
                             return py::bool_(false);
                     return py::bool_(true);
                 }
                 const py::object mapping = py::module_::import("collections.abc").attr("Mapping");
                 if (!py::isinstance(other, mapping)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
                 py::dict mine, theirs;
                 for (const auto& name : h.names) mine[name] = h.joined(name);
                 for (const auto& item : other.attr("items")()) {
                     const auto pair = py::reinterpret_borrow<py::tuple>(item);
                     if (!py::isinstance<py::str>(pair[0])) return py::bool_(false);
                     theirs[PyHeaders::lower(pair[0])] = pair[1];
                 }
                 return py::bool_(mine.equal(theirs));
             })
        .def("__repr__", [](const PyHeaders& h) {
            py::list items;
            for (const auto& [k, v] : h.fields) items.append(py::make_tuple(k, v));
            return "Headers(" + py::repr(items).cast<std::string>() + ")";
        });
    headers_cls.attr("__hash__") = py::none();
    headers_cls.attr("__module__") = "beast_client";

    py::class_<PyResponse> response_cls(m, "Response", py::is_final(),
                                        "A complete HTTP response (returned by Client.request).");
    response_cls
        .def_property_readonly(
            "status", [](const PyResponse& r) { return r.status; }, "The status code.")
        .def_property_readonly(
            "reason", [](const PyResponse& r) { return latin1(r.reason); }, "The status line's reason (may be '').")
        .def_property_readonly(
            "url", [](const PyResponse& r) { return r.url; }, "The final URL, after redirects (percent-encoded).")
        .def_property_readonly(
            "headers", [](const PyResponse& r) { return r.headers; },
            "The headers (Headers: case-insensitive, repeated fields kept apart), as received: after decoding\n"
            "a gzip / deflate body, Content-Encoding and Content-Length still describe the encoded body.")
        .def_property_readonly(
            "body", [](const PyResponse& r) { return r.body; }, "The whole body (decoded when it was compressed).")
        .def(
            "text",
            [](const PyResponse& r) {
                const std::string charset = charset_of(r.headers.cast<const PyHeaders&>());
                return r.body.attr("decode")(charset, "replace");
            },
            "The body decoded with the Content-Type's charset (UTF-8 when it names none or an unknown one),\n"
            "undecodable bytes replaced.")
        .def(
            "json", [](const PyResponse& r) { return py::module_::import("json").attr("loads")(r.body); },
            "json.loads(body); a body that is not JSON raises json.JSONDecodeError.")
        .def("__repr__", [](const PyResponse& r) { return "<Response [" + std::to_string(r.status) + "]>"; });
    response_cls.attr("__module__") = "beast_client";

    py::class_<PyBytesIterator>(m, "_BytesIterator", py::is_final())
        .def("__iter__", [](py::object self) { return self; })
        .def("__next__", [](PyBytesIterator& it) {
            py::object chunk = it.owner.cast<PyStream&>().next_chunk();
            if (!chunk) throw py::stop_iteration();
            return chunk;
        });

    py::class_<PyStream> stream_cls(m, "StreamResponse", py::is_final(),
                                    "A response whose body is read as it arrives (Client.stream()); a context\n"
                                    "manager. Use it from the thread of its Client.");
    stream_cls
        .def_property_readonly(
            "status", [](const PyStream& s) { return s.stream->status(); }, "The status code.")
        .def_property_readonly(
            "reason", [](const PyStream& s) { return latin1(s.stream->reason()); }, "The status line's reason.")
        .def_property_readonly(
            "url", [](const PyStream& s) { return s.stream->url(); }, "The final URL, after redirects.")
        .def_property_readonly(
            "headers", [](const PyStream& s) { return s.headers; }, "The headers (Headers).")
        .def_property_readonly(
            "closed", [](const PyStream& s) { return s.closed.load(); }, "Whether close() was called.")
        .def(
            "iter_bytes", [](py::object self) { return PyBytesIterator{std::move(self)}; },
            "An iterator over the body's chunks as they arrive (decoded when compressed); the GIL is released\n"
            "while it waits for each one.")
        .def(
            "read",
            [](PyStream& s) {
                std::string all;
                for (;;) {
                    py::object chunk = s.next_chunk();
                    if (!chunk) break;
                    all += chunk.cast<std::string>();
                }
                return py::bytes(all);
            },
            "The rest of the body.")
        .def("close", &PyStream::close,
             "Close the response: the connection is re-used only if the body was read to its end. Idempotent.")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__",
             [](PyStream& s, const py::args&) {
                 s.close();
                 return false;
             })
        .def("__repr__",
             [](const PyStream& s) { return "<StreamResponse [" + std::to_string(s.stream->status()) + "]>"; });
    stream_cls.attr("__module__") = "beast_client";

    // dynamic_attr: instances take arbitrary attributes (a __dict__), like plain Python objects
    py::class_<PyClient> client_cls(
        m, "Client", py::dynamic_attr(),
        "HTTP/1.1 client with a small pool of keep-alive connections (one per scheme + host + port; Boost.Beast).\n"
        "Not for concurrent use: a second thread calling into a busy Client gets RuntimeError; use one per thread.");
    client_cls
        .def(py::init([](const py::object& timeout, const py::object& verify, const py::object& connect_timeout,
                         const py::object& read_timeout, bool follow_redirects, int max_redirects,
                         const py::object& headers, bool decompress, const py::object& user_agent) {
                 ClientSettings s;
                 s.timeout = to_seconds(timeout, "timeout");  // ValueError before anything else
                 s.connect_timeout = to_seconds(connect_timeout, "connect_timeout");
                 s.read_timeout = to_seconds(read_timeout, "read_timeout");
                 s.follow_redirects = follow_redirects;
                 if (max_redirects < 0) throw py::value_error("max_redirects must be >= 0");
                 s.max_redirects = max_redirects;
                 s.decompress = decompress;
                 if (user_agent.is_none())
                     s.user_agent = std::string("beast-client/") + BEAST_CLIENT_PY_VERSION;
                 else
                     s.user_agent = text_of(user_agent, "user_agent");
                 s.headers = to_headers(headers);
                 bc::TlsConfig tls = to_tls_config(verify);
                 const std::string path = tls.ca_file;
                 try {
                     return std::make_unique<PyClient>(std::move(s), std::move(tls), verify);
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
             py::arg("timeout") = py::none(), py::arg("verify") = true, py::kw_only(),
             py::arg("connect_timeout") = 10.0, py::arg("read_timeout") = 30.0, py::arg("follow_redirects") = true,
             py::arg("max_redirects") = 10, py::arg("headers") = py::none(), py::arg("decompress") = true,
             py::arg("user_agent") = py::none(),
             "timeout: seconds allowed for each whole request (connect, TLS handshake, send, receive the\n"
             "whole body), > 0; None (the default): no total limit. connect_timeout: resolve + TCP connect +\n"
             "TLS handshake. read_timeout: the longest wait for the next bytes of the response.\n"
             "verify (https:// URLs), as in requests: True = the system's trust store; a path (str or\n"
             "os.PathLike) = trust the CA certificates in this PEM file (or c_rehash directory) instead;\n"
             "False = no verification at all (UNSAFE: anyone on the path can impersonate the server).\n"
             "A CA bundle that cannot be opened raises FileNotFoundError / PermissionError (OSError);\n"
             "one without any PEM certificate ValueError; a verify of another type TypeError.\n"
             "follow_redirects / max_redirects, headers (sent with every request), decompress (gzip, deflate)\n"
             "and user_agent apply to request() and stream(), never to get() / fetch_len().")
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
            "timeout", [](const PyClient& c) { return c.settings.timeout; },
            "The total timeout of a request, seconds (None: no limit).")
        .def_property_readonly(
            "connect_timeout", [](const PyClient& c) { return c.settings.connect_timeout; },
            "The connect (+ TLS handshake) timeout, seconds (None: no limit).")
        .def_property_readonly(
            "read_timeout", [](const PyClient& c) { return c.settings.read_timeout; },
            "The read timeout (longest wait for the next bytes), seconds (None: no limit).")
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
            [](PyClient& self, const std::string& method, const std::string& url, const py::object& params,
               const py::object& headers, const py::object& body, const py::object& json, const py::object& timeout,
               const py::object& follow_redirects, bool release_gil) {
                bc::Client& c = self.open();
                Prepared p;
                prepare(p, self, method, url, params, headers, body, json, timeout, follow_redirects);
                PyClient::Finish finish{self};
                bc::Response r = run_interruptible(release_gil, [&](const bc::CancelCheck& check) {
                    return c.send(p.method, p.url, p.headers, p.body.data(), p.options, check);
                });
                return to_python(std::move(r));
            },
            py::arg("method"), py::arg("url"), py::kw_only(), py::arg("params") = py::none(),
            py::arg("headers") = py::none(), py::arg("body") = py::none(), py::arg("json") = py::none(),
            py::arg("timeout") = py::none(), py::arg("follow_redirects") = py::none(), py::arg("release_gil") = true,
            "Send any request and return the complete Response (GIL released during I/O by default).\n"
            "params are appended to the URL's query; headers override the client's by name; body is a\n"
            "bytes-like object (or an iterable of them, or a binary file: read into memory first), json any\n"
            "value json.dumps accepts; timeout (seconds) replaces the client's total timeout;\n"
            "follow_redirects=None uses the client's setting.")
        .def(
            "stream",
            [](py::object self_obj, const std::string& method, const std::string& url, const py::object& params,
               const py::object& headers, const py::object& body, const py::object& json, const py::object& timeout,
               const py::object& follow_redirects) {
                PyClient& self = self_obj.cast<PyClient&>();
                bc::Client& c = self.open();
                Prepared p;
                prepare(p, self, method, url, params, headers, body, json, timeout, follow_redirects);
                std::unique_ptr<bc::ResponseStream> stream;
                {
                    PyClient::Finish finish{self};
                    stream = run_interruptible(true, [&](const bc::CancelCheck& check) {
                        return c.stream(p.method, p.url, p.headers, p.body.data(), p.options, check);
                    });
                }
                auto out = std::make_unique<PyStream>();
                out->client = self_obj;
                out->owner = &self;
                out->headers = py::cast(PyHeaders::from_bc(stream->headers()));
                out->stream = std::move(stream);
                return out;
            },
            py::arg("method"), py::arg("url"), py::kw_only(), py::arg("params") = py::none(),
            py::arg("headers") = py::none(), py::arg("body") = py::none(), py::arg("json") = py::none(),
            py::arg("timeout") = py::none(), py::arg("follow_redirects") = py::none(),
            "As request(), but returns once the headers are read: a StreamResponse (a context manager) whose\n"
            "iter_bytes() yields the body as it arrives. The GIL is released while waiting.")
        .def_property_readonly(
            "last_body_bytes", [](const PyClient& c) { return c.client.last_body_bytes(); },
            "Body bytes received by the last get()/fetch_len()/request() (for a failed\n"
            "request: what arrived before it failed).")
        .def_property_readonly(
            "_connections_opened", [](const PyClient& c) { return c.client.connections_opened(); },
            "Connections opened so far (diagnostics; not part of the stable API).")
        .def("__repr__", [](const PyClient& c) {
            char buf[64];
            if (c.settings.timeout)
                std::snprintf(buf, sizeof buf, "%g", *c.settings.timeout);
            else
                std::snprintf(buf, sizeof buf, "None");
            std::string verify;
            if (!(PyBool_Check(c.verify.ptr()) && c.verify.ptr() == Py_True))
                verify = " verify=" + py::repr(c.verify).cast<std::string>();
            return std::string("<beast_client.Client timeout=") + buf + verify + (c.closed.load() ? " closed>" : ">");
        });
    client_cls.attr("__module__") = "beast_client";
}
