// The Python Client: its constructor's arguments, requests (fetch, request, stream; get and fetch_len in fast.cpp) and
// properties.
#include "types.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace beast_py {

void register_client(py::module_& m) {
    // dynamic_attr: instances take arbitrary attributes (a __dict__), like plain Python objects
    py::class_<PyClient> client_cls(
        m, "Client", py::dynamic_attr(),
        "HTTP/1.1 client with a pool of keep-alive connections per origin (scheme + host + port; Boost.Beast).\n"
        "Safe to share between threads: each request takes a connection of its own from the pool (at most\n"
        "max_connections per origin) and releases the GIL while it waits on the network.");
    client_cls
        .def(py::init([](const py::object& timeout, const py::object& verify, const py::object& connect_timeout,
                         const py::object& read_timeout, bool follow_redirects, int max_redirects,
                         const py::object& headers, bool decompress, const py::object& user_agent,
                         const py::object& cookies, const py::object& max_body_size, const py::object& max_connections,
                         bool trust_env, const py::object& proxy) {
                 ClientSettings s =
                     client_settings(timeout, connect_timeout, read_timeout, follow_redirects, max_redirects, headers,
                                     decompress, user_agent, cookies, max_body_size, max_connections, trust_env, proxy);
                 bc::TlsConfig tls = to_tls_config(verify);
                 const std::string path = tls.ca_file;
                 try {
                     return std::make_unique<PyClient>(std::move(s), std::move(tls), verify);
                 } catch (const std::system_error& e) {  // the CA bundle cannot be opened: as open() reports it
                     raise_os_error(e, path);
                 }
             }),
             py::arg("timeout") = py::none(), py::arg("verify") = true, py::kw_only(),
             py::arg("connect_timeout") = 10.0, py::arg("read_timeout") = 30.0, py::arg("follow_redirects") = true,
             py::arg("max_redirects") = 10, py::arg("headers") = py::none(), py::arg("decompress") = true,
             py::arg("user_agent") = py::none(), py::arg("cookies") = false, py::arg("max_body_size") = py::none(),
             py::arg("max_connections") = py::none(), py::arg("trust_env") = true, py::arg("proxy") = py::none(),
             "timeout: seconds allowed for each whole request (connect, TLS handshake, send, receive the\n"
             "whole body), > 0; None (the default): no total limit. connect_timeout: resolve + TCP connect +\n"
             "TLS handshake. read_timeout: the longest wait for the next bytes of the response.\n"
             "verify (https:// URLs), as in requests: True = the system's trust store; a path (str or\n"
             "os.PathLike) = trust the CA certificates in this PEM file (or c_rehash directory) instead;\n"
             "False = no verification at all (UNSAFE: anyone on the path can impersonate the server).\n"
             "A CA bundle that cannot be opened raises FileNotFoundError / PermissionError (OSError);\n"
             "one without any PEM certificate ValueError; a verify of another type TypeError.\n"
             "follow_redirects / max_redirects, headers (sent with every request), decompress (gzip, deflate,\n"
             "br, zstd),\n"
             "user_agent and cookies (True: a cookie jar) apply to request() and stream(), never to get(),\n"
             "fetch_len() or fetch(); max_body_size (bytes, decoded) bounds the body request() keeps\n"
             "(BodyTooLarge). max_connections: the most connections open or in use per origin at once\n"
             "(None, the default: no bound); a request finding them all busy waits for one, at most\n"
             "connect_timeout and what is left of its timeout (then TimeoutError).\n"
             "trust_env: proxies from HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY (and the lower-case\n"
             "forms), read now; proxy: 'http://[user:password@]host:port' for every URL (it wins over the\n"
             "environment; another scheme or a bad URL is a ValueError).")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__",
             [](PyClient& c, const py::args&) {
                 c.close();
                 return false;
             })
        .def("close", &PyClient::close,
             "Close the pooled connections. Idempotent; later requests raise RuntimeError. A request running\n"
             "in another thread finishes first (its connection is closed then).")
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
                const auto info = c.client->tls_info();
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
            "fetch",
            [](PyClient& self, const std::string& url, const std::string& method, const py::object& body,
               bool release_gil) {
                bc::Client& c = self.open();
                // only bytes-like: the benchmark path sends a buffer it is handed, never iterates or reads
                if (!body.is_none() && (py::isinstance<py::str>(body) || !PyObject_CheckBuffer(body.ptr())))
                    throw py::type_error(std::string("body must be bytes-like or None, not ") +
                                         Py_TYPE(body.ptr())->tp_name);
                Body b;
                b.set(body);
                PyClient::Finish finish{self};
                bc::Response r = run_interruptible(release_gil, [&](const bc::CancelCheck& check) {
                    return c.request(method, url, {}, b.data(), check);
                });
                return py::make_tuple(r.status, py::bytes(r.body));
            },
            py::arg("url"), py::kw_only(), py::arg("method") = "GET", py::arg("body") = py::none(),
            py::arg("release_gil") = true,
            "Send method to url exactly as given, with body (bytes-like, sent with Content-Length) if any;\n"
            "read the whole body and return (status, body). The benchmark path of uploads: no redirects,\n"
            "no decoding, no default headers.")
        .def(
            "request",
            [](PyClient& self, const std::string& method, const std::string& url, const py::object& params,
               const py::object& headers, const py::object& body, const py::object& json, const py::object& timeout,
               const py::object& follow_redirects, bool release_gil) {
                bc::Client& c = self.open();
                Prepared p;
                prepare(p, self.settings, method, url, params, headers, body, json, timeout, follow_redirects, true);
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
            "bytes-like object (or an iterable of them, or a binary file: streamed, chunked), json any\n"
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
                prepare(p, self.settings, method, url, params, headers, body, json, timeout, follow_redirects, true);
                p.options.phases = false;  // a StreamResponse has none
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
            "last_body_bytes", [](const PyClient& c) { return c.client->last_body_bytes(); },
            "Body bytes received by the last get()/fetch_len()/fetch()/request() (for a failed\n"
            "request: what arrived before it failed); with threads sharing the client, by whichever\n"
            "finished last (fetch_len() returns its own).")
        .def_property_readonly(
            "_connections_opened", [](const PyClient& c) { return c.client->connections_opened(); },
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

}  // namespace beast_py
