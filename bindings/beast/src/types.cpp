// The Python types of a response: Headers, Response, StreamResponse (and its _BytesIterator); the fork
// generation (types.hpp).
#include "types.hpp"

#include <pthread.h>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace beast_py {

std::atomic<std::uint64_t> fork_generation_counter{0};

namespace {

// runs in the child of every fork(): async-signal-safe, one atomic add
extern "C" void bump_fork_generation() { fork_generation_counter.fetch_add(1, std::memory_order_relaxed); }

// once per process, at import
void watch_forks() {
    static std::once_flag registered;
    int rc = 0;
    std::call_once(registered, [&] { rc = pthread_atfork(nullptr, nullptr, bump_fork_generation); });
    if (rc != 0) throw std::runtime_error(std::string("pthread_atfork failed: ") + std::strerror(rc));
}

}  // namespace

PyResponse to_python(bc::Response&& r) {
    return PyResponse{r.status,
                      std::move(r.reason),
                      std::move(r.url),
                      py::cast(PyHeaders::from_bc(r.headers)),
                      py::bytes(r.body.data(), r.body.size()),
                      r.phases ? phases_dict(*r.phases, true) : py::dict()};
}

py::dict phases_dict(const bc::Phases& p, bool seconds) {
    py::dict out;
    const auto put = [&](const char* key, std::chrono::nanoseconds d) {
        if (seconds)
            out[key] = py::float_(std::chrono::duration<double>(d).count());
        else
            out[key] = py::int_(static_cast<long long>(d.count()));
    };
    if (p.resolved) put("dns", p.dns);
    put("connect", p.connect);
    put("tls", p.tls);
    put("send", p.send);
    put("wait", p.wait);
    put("receive", p.receive);
    return out;
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

void register_types(py::module_& m) {
    watch_forks();
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
                 // as Mappings: the joined values by lower-case name, in any order
                 const auto as_dict = [](const PyHeaders& x) {
                     py::dict d;
                     for (const auto& name : x.names) d[name] = x.joined(name);
                     return d;
                 };
                 py::dict mine = as_dict(h);
                 if (py::isinstance<PyHeaders>(other))
                     return py::bool_(mine.equal(as_dict(other.cast<const PyHeaders&>())));
                 const py::object mapping = py::module_::import("collections.abc").attr("Mapping");
                 if (!py::isinstance(other, mapping)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
                 py::dict theirs;
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
        .def_property_readonly(
            "phases", [](const PyResponse& r) { return r.phases; },
            "Where the request's time went, in seconds (as requests' Response.elapsed): {'connect', 'tls',\n"
            "'send', 'wait', 'receive'} ('dns' first when a host name was resolved), measured by the C++\n"
            "client; connect and tls are 0 on a re-used connection (tls also over http://), and the\n"
            "exchanges of redirects add up.")
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
}

}  // namespace beast_py
