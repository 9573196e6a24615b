// RawAsyncClient's loop path (aio_loop.cpp): get(), fetch_len() and fetch() over http:// run on the running event
// loop's own thread, each a beast_client::LoopConnection whose socket the loop watches; the IoThread only opens
// the connections. What it does not take (https://, a proxy, another thread's loop) goes to the IoThread's path.
#pragma once

#include "types.hpp"

#include "beast_client/async_client.hpp"

#include <memory>

namespace beast_py {

class LoopPath;

// The loop path of a RawAsyncClient whose C++ client is `client`: its connections go through `client.connect()`,
// its pool is its own (max_connections per origin, as settings say).
std::shared_ptr<LoopPath> make_loop_path(bc::AsyncClient& client, const ClientSettings& settings);
// RawAsyncClient.close(): idle connections closed (now on the loop's thread, else as soon as it runs), the others
// as their requests end; the client's destructor: everything, the C++ client no longer used.
void close_loop_path(LoopPath& path);
void detach_loop_path(LoopPath& path);

// RawAsyncClient's methods loop_get, loop_fetch_len, loop_fetch, loop_fetch_phases, abandon and _loop_requests.
void register_loop_path(py::module_& m);

}  // namespace beast_py
