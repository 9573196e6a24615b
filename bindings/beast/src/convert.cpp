#include "convert.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#ifdef BEAST_CLIENT_PROBE_CA_BUNDLES
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#endif

namespace beast_py {

std::chrono::nanoseconds to_timeout(double seconds, const char* what) {
    if (!std::isfinite(seconds) || !(seconds > 0))
        throw py::value_error(std::string(what) + " must be a positive, finite number of seconds (or None)");
    const double capped = std::min(seconds, 3.0e8);  // ~10 years; the C++ client clamps there too
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(capped));
}

std::optional<double> to_seconds(const py::object& value, const char* what) {
    if (value.is_none()) return std::nullopt;
    if (PyBool_Check(value.ptr()) || !(PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr())))
        throw py::type_error(std::string(what) + " must be a number of seconds or None, not " +
                             Py_TYPE(value.ptr())->tp_name);
    const double seconds = value.cast<double>();
    to_timeout(seconds, what);  // ValueError
    return seconds;
}

std::optional<std::uint64_t> to_size(const py::object& value, const char* what) {
    if (value.is_none()) return std::nullopt;
    if (PyBool_Check(value.ptr()) || !PyLong_Check(value.ptr()))
        throw py::type_error(std::string(what) + " must be an int or None, not " + Py_TYPE(value.ptr())->tp_name);
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow < 0 || (overflow == 0 && n < 0)) throw py::value_error(std::string(what) + " must be >= 0 or None");
    if (overflow > 0) return std::numeric_limits<std::uint64_t>::max();  // more than any body
    return static_cast<std::uint64_t>(n);
}

std::optional<std::chrono::nanoseconds> to_duration(std::optional<double> seconds, const char* what) {
    if (!seconds) return std::nullopt;
    return to_timeout(*seconds, what);
}

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

std::string utf8(const py::handle& text) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return std::string(data, static_cast<std::size_t>(size));
}

std::string text_of(const py::handle& value, const char* what) {
    if (!py::isinstance<py::str>(value))
        throw py::type_error(std::string(what) + " must be str, not " + Py_TYPE(value.ptr())->tp_name);
    return utf8(value);
}

bc::Headers to_headers(const py::object& headers) {
    bc::Headers out;
    if (headers.is_none()) return out;
    for_each_pair(headers, "headers", [&](const py::object& name, const py::object& value) {
        out.emplace_back(text_of(name, "a header name"), text_of(value, "a header value"));
    });
    return out;
}

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

void Body::set(const py::object& body, bool stream) {
    if (body.is_none()) return;
    if (py::isinstance<py::str>(body))
        throw py::type_error("body must be bytes-like (or an iterable of bytes / a binary file), not str: encode it");
    if (PyObject_CheckBuffer(body.ptr())) {
        if (PyObject_GetBuffer(body.ptr(), &view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
        has_view_ = true;
        return;
    }
    if (py::hasattr(body, "read")) {
        if (stream) {
            file_ = body;
            streamed_ = true;
        } else {
            append(body.attr("read")(), "body.read()");
        }
        return;
    }
    if (!py::hasattr(body, "__iter__"))
        throw py::type_error(std::string("body must be bytes-like, an iterable of bytes-like objects or a binary "
                                         "file object, not ") +
                             Py_TYPE(body.ptr())->tp_name);
    if (stream) {
        iterator_ = body.attr("__iter__")();
        streamed_ = true;
        return;
    }
    for (const auto& chunk : body) append(py::reinterpret_borrow<py::object>(chunk), "each chunk of body");
}

bc::BodySource Body::source() {
    return [this](std::string_view& piece) -> bool {
        py::gil_scoped_acquire gil;  // the request runs without it
        drop_piece();                // the request has written the last one
        py::object next;
        if (file_) {
            next = file_.attr("read")(64 * 1024);
        } else {
            auto* item = PyIter_Next(iterator_.ptr());
            if (item == nullptr) {
                if (PyErr_Occurred()) throw py::error_already_set();
                return false;
            }
            next = py::reinterpret_steal<py::object>(item);
        }
        const char* what = file_ ? "body.read()" : "each chunk of body";
        if (py::isinstance<py::str>(next) || !PyObject_CheckBuffer(next.ptr()))
            throw py::type_error(std::string(what) + " must be bytes-like, not " + Py_TYPE(next.ptr())->tp_name);
        if (PyObject_GetBuffer(next.ptr(), &piece_view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
        has_piece_ = true;
        piece_ = std::move(next);
        piece = {static_cast<const char*>(piece_view_.buf), static_cast<std::size_t>(piece_view_.len)};
        return !(file_ && piece.empty());  // a file's end: read() gave nothing
    };
}

void Body::append(const py::object& chunk, const char* what) {
    if (py::isinstance<py::str>(chunk) || !PyObject_CheckBuffer(chunk.ptr()))
        throw py::type_error(std::string(what) + " must be bytes-like, not " + Py_TYPE(chunk.ptr())->tp_name);
    Py_buffer v;
    if (PyObject_GetBuffer(chunk.ptr(), &v, PyBUF_SIMPLE) != 0) throw py::error_already_set();
    owned_.append(static_cast<const char*>(v.buf), static_cast<std::size_t>(v.len));
    PyBuffer_Release(&v);
}

py::str latin1(const std::string& s) {
    auto out =
        py::reinterpret_steal<py::str>(PyUnicode_DecodeLatin1(s.data(), static_cast<Py_ssize_t>(s.size()), nullptr));
    if (!out) throw py::error_already_set();
    return out;
}

}  // namespace beast_py
