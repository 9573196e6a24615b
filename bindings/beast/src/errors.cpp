#include "errors.hpp"

#include "beast_client/client.hpp"

#include <exception>

namespace beast_py {

namespace bc = beast_client;

namespace {

// created once at import (register_errors)
PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> protocol_error_type;
PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> body_too_large_type;
PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> tls_error_type;
PYBIND11_CONSTINIT py::gil_safe_call_once_and_store<py::object> too_many_redirects_type;

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
    } catch (const bc::BodyTooLarge& e) {
        py::set_error(body_too_large_type.get_stored(), e.what());
    } catch (const bc::ProtocolError& e) {
        py::set_error(protocol_error_type.get_stored(), e.what());
    } catch (const bc::TooManyRedirects& e) {
        py::set_error(too_many_redirects_type.get_stored(), e.what());
    } catch (const bc::Cancelled& e) {  // cancelled without a pending Python exception
        py::set_error(PyExc_KeyboardInterrupt, e.what());
    } catch (const bc::Error& e) {
        py::set_error(PyExc_OSError, e.what());
    }
}

}  // namespace

void register_errors(py::module_& m) {
    protocol_error_type.call_once_and_store_result([&]() -> py::object {
        auto type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
            "beast_client.ProtocolError",
            "The server sent a malformed HTTP response, or a redirect whose Location cannot be followed (a\n"
            "subclass of OSError).",
            PyExc_OSError, nullptr));
        if (!type) throw py::error_already_set();
        return type;
    });
    m.attr("ProtocolError") = protocol_error_type.get_stored();
    body_too_large_type.call_once_and_store_result([&]() -> py::object {
        auto type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
            "beast_client.BodyTooLarge",
            "A response body larger than the client's max_body_size (decoded), or than 1 GiB: a subclass of\n"
            "ProtocolError; nothing of it is kept.",
            protocol_error_type.get_stored().ptr(), nullptr));
        if (!type) throw py::error_already_set();
        return type;
    });
    m.attr("BodyTooLarge") = body_too_large_type.get_stored();
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
}

}  // namespace beast_py
