#include "settings.hpp"

#include <algorithm>
#include <utility>

namespace beast_py {

std::string default_user_agent() { return std::string("beast-client/") + BEAST_CLIENT_PY_VERSION; }

ClientSettings client_settings(const py::object& timeout, const py::object& connect_timeout,
                               const py::object& read_timeout, bool follow_redirects, int max_redirects,
                               const py::object& headers, bool decompress, const py::object& user_agent,
                               const py::object& cookies, const py::object& max_body_size,
                               const py::object& max_connections, bool trust_env, const py::object& proxy) {
    ClientSettings s;
    s.timeout = to_seconds(timeout, "timeout");  // ValueError before anything else
    s.connect_timeout = to_seconds(connect_timeout, "connect_timeout");
    s.read_timeout = to_seconds(read_timeout, "read_timeout");
    s.follow_redirects = follow_redirects;
    if (max_redirects < 0) throw py::value_error("max_redirects must be >= 0");
    s.max_redirects = max_redirects;
    s.decompress = decompress;
    s.user_agent = user_agent.is_none() ? default_user_agent() : text_of(user_agent, "user_agent");
    s.headers = to_headers(headers);
    // checked now (ValueError), not at the first request
    bc::validate_headers(s.headers);
    bc::validate_headers({{"User-Agent", s.user_agent}});
    if (!PyBool_Check(cookies.ptr()))
        throw py::type_error(std::string("cookies must be True or False, not ") + Py_TYPE(cookies.ptr())->tp_name);
    if (cookies.ptr() == Py_True) s.cookies = std::make_shared<bc::CookieJar>();
    s.max_body_size = to_size(max_body_size, "max_body_size");
    if (PyLong_Check(max_connections.ptr()) && !PyBool_Check(max_connections.ptr())) {
        int overflow = 0;
        const long long n = PyLong_AsLongLongAndOverflow(max_connections.ptr(), &overflow);
        if (overflow < 0 || (overflow == 0 && n < 1))
            throw py::value_error("max_connections must be >= 1, or None (no bound)");
    }
    s.max_connections = to_size(max_connections, "max_connections");
    // an explicit proxy wins over the environment (NO_PROXY included), as in reqwest
    if (!proxy.is_none())
        s.proxy = bc::ProxyConfig::all(text_of(proxy, "proxy"));
    else if (trust_env)
        s.proxy = bc::ProxyConfig::from_environment();
    return s;
}

bc::Timeouts timeouts_of(const ClientSettings& s) {
    return bc::Timeouts{to_duration(s.timeout, "timeout"), to_duration(s.connect_timeout, "connect_timeout"),
                        to_duration(s.read_timeout, "read_timeout")};
}

void raise_os_error(const std::system_error& e, const std::string& path) {
    const int err = e.code().value();
    const auto filename = py::reinterpret_steal<py::object>(PyUnicode_DecodeFSDefault(path.c_str()));
    if (!filename) throw py::error_already_set();
    // OSError(errno, strerror, filename) is FileNotFoundError, PermissionError, ... by errno
    py::object exc =
        py::reinterpret_borrow<py::object>(PyExc_OSError)(err, std::generic_category().message(err), filename);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
}

void prepare(Prepared& p, const ClientSettings& s, const std::string& method, const std::string& url,
             const py::object& params, const py::object& headers, const py::object& body, const py::object& json,
             const py::object& timeout, const py::object& follow_redirects, bool stream_body) {
    p.method = method;
    bc::reject_control_characters(url);  // before add_query() drops the fragment
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
        p.body.set(body, stream_body);
    }
    const auto t = to_seconds(timeout, "timeout");
    p.options.timeout = t ? to_duration(t, "timeout") : std::nullopt;
    if (!follow_redirects.is_none() && !PyBool_Check(follow_redirects.ptr()))
        throw py::type_error("follow_redirects must be True, False or None");
    p.options.follow_redirects = follow_redirects.is_none() ? s.follow_redirects : follow_redirects.ptr() == Py_True;
    p.options.max_redirects = s.max_redirects;
    p.options.decompress = s.decompress;
    p.options.user_agent = s.user_agent;
    p.options.max_body_size = s.max_body_size;
    p.options.cookies = s.cookies;
    p.options.phases = true;  // Response.phases: a few clock reads per request (stream() turns it off)
    if (p.body.streamed()) p.options.upload = p.body.source();
}

}  // namespace beast_py
