// RawUpload: an AsyncClient request's body streamed from an iterable, an async iterable or a binary file
// (beast_client::AsyncBodySource). The IoThread never calls Python: the Python side (_aio.py, shared with
// reqwest_client) iterates the source on the event loop's thread and hands each chunk to send(), which gives it to
// the request at once when the IoThread waits for one, else appends it to what waits; once kBatch bytes wait,
// send() returns an asyncio future (resolved through the loop's Completer) that says when the IoThread took them.
// The IoThread takes everything that waits at once, written as one chunk by one gathering write: a hand-off each
// way per batch, not per chunk, and at most about twice kBatch held per request. finish() ends the body; fail() aborts
// the request (the Python side then raises the source's own exception).
#include "aio.hpp"

#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace beast_py {

namespace {

constexpr std::size_t kBatch = 256 * 1024;
constexpr std::size_t kSpare = 4;  // buffers kept for re-use

class UploadFeed final : public bc::AsyncBodySource {
public:
    // IoThread: the next pieces now (all that wait), or once send() / finish() / fail() gives it.
    void next(bc::PiecesCallback done) override {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!pieces_.empty()) {
            std::vector<std::string> pieces = std::exchange(pieces_, {});
            bytes_ = 0;
            std::function<void(bool)> wake = std::exchange(room_, nullptr);
            lock.unlock();
            if (wake) wake(true);
            return done(std::move(pieces), nullptr);
        }
        if (failure_) {
            const std::exception_ptr e = failure_;
            lock.unlock();
            return done({}, e);
        }
        if (finished_) {
            lock.unlock();
            return done({}, nullptr);
        }
        waiting_ = std::move(done);
    }

    // IoThread: the request no longer reads its body. A send() that waits for room hears so (false).
    void close() noexcept override {
        bc::PiecesCallback dropped;  // it holds the request: released outside the lock
        std::function<void(bool)> wake;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
            dropped = std::move(waiting_);
            waiting_ = nullptr;
            pieces_.clear();
            wake = std::exchange(room_, nullptr);
        }
        if (wake) wake(false);
    }

    // IoThread: written pieces, whose buffers the next send()s fill again (a fresh 64 KiB buffer for every chunk
    // made the copy fault its pages in anew: a third of the client's CPU in an 8 MiB upload).
    void recycle(std::vector<std::string> written) noexcept override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& w : written)
            if (free_.size() < kSpare && w.capacity() > 0) free_.push_back(std::move(w));
    }

    // The loop's thread (with the GIL): True (given or queued), False (the request no longer reads), or a future.
    // The lock is held for moves only: the IoThread takes it for every piece.
    py::object send(const char* data, std::size_t size, const py::object& completer) {
        std::unique_lock<std::mutex> lock(mutex_);
        std::string piece;
        if (!free_.empty()) {
            piece = std::move(free_.back());
            free_.pop_back();
        }
        lock.unlock();
        piece.assign(data, size);
        lock.lock();
        if (finished_ || failure_) throw std::runtime_error("the upload is finished");
        if (closed_) return py::bool_(false);
        if (piece.empty()) return py::bool_(true);  // an empty chunk would end a chunked body
        if (room_) throw std::runtime_error("send() again before the previous send()'s future resolved");
        if (waiting_) {
            bc::PiecesCallback done = std::exchange(waiting_, nullptr);
            lock.unlock();
            std::vector<std::string> one;
            one.push_back(std::move(piece));
            done(std::move(one), nullptr);
            return py::bool_(true);
        }
        bytes_ += piece.size();
        pieces_.push_back(std::move(piece));
        if (bytes_ < kBatch) return py::bool_(true);
        const std::uint64_t batch = ++batches_;
        lock.unlock();
        auto [future, resolve] = flag_future(completer);  // Python: outside the lock
        lock.lock();
        if (batch == batches_ && !pieces_.empty() && !closed_ && !failure_) {
            room_ = std::move(resolve);
            return future;
        }
        const bool reading = !closed_ && !failure_;
        lock.unlock();
        resolve(reading);  // taken (or closed) meanwhile: the future resolves at once
        return future;
    }

    void finish() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (finished_ || failure_) return;
        finished_ = true;
        if (!waiting_) return;
        bc::PiecesCallback done = std::exchange(waiting_, nullptr);
        lock.unlock();
        done({}, nullptr);
    }

    void fail(const std::string& message) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (finished_ || failure_) return;
        failure_ = std::make_exception_ptr(std::runtime_error("the body's source raised: " + message));
        pieces_.clear();
        std::function<void(bool)> wake = std::exchange(room_, nullptr);
        bc::PiecesCallback done = std::exchange(waiting_, nullptr);
        lock.unlock();
        if (wake) wake(false);
        if (done) done({}, failure_);
    }

private:
    std::mutex mutex_;
    std::vector<std::string> pieces_;  // the chunks given, not yet taken
    std::vector<std::string> free_;    // written ones' buffers
    std::size_t bytes_ = 0;            // their size
    std::uint64_t batches_ = 0;        // the batches filled so far
    std::function<void(bool)> room_;   // resolves the future of the send() that filled the batch
    bc::PiecesCallback waiting_;       // the IoThread's next(), when nothing waited
    bool finished_ = false;
    bool closed_ = false;
    std::exception_ptr failure_;
};

struct PyUpload {
    std::shared_ptr<UploadFeed> feed = std::make_shared<UploadFeed>();
    bool taken = false;
};

}  // namespace

std::shared_ptr<bc::AsyncBodySource> take_upload(const py::object& body, const py::object& json) {
    if (!py::isinstance<PyUpload>(body)) return nullptr;
    if (!json.is_none()) throw py::type_error("pass body or json, not both");
    PyUpload& u = body.cast<PyUpload&>();
    if (u.taken) throw py::type_error("this upload is already the body of another request");
    u.taken = true;
    return u.feed;
}

void register_upload(py::module_& m) {
    py::class_<PyUpload>(m, "RawUpload", py::is_final(),
                         "The body of an AsyncClient request, fed from the event loop's thread (internal: "
                         "beast_client.AsyncClient).")
        .def(py::init<>())
        .def(
            "send",
            [](PyUpload& u, const py::object& chunk, const py::object& completer) {
                if (py::isinstance<py::str>(chunk) || !PyObject_CheckBuffer(chunk.ptr()))
                    throw py::type_error(std::string("body chunks must be bytes-like, not ") +
                                         Py_TYPE(chunk.ptr())->tp_name);
                Py_buffer v;
                if (PyObject_GetBuffer(chunk.ptr(), &v, PyBUF_SIMPLE) != 0) throw py::error_already_set();
                try {
                    py::object out =
                        u.feed->send(static_cast<const char*>(v.buf), static_cast<std::size_t>(v.len), completer);
                    PyBuffer_Release(&v);
                    return out;
                } catch (...) {
                    PyBuffer_Release(&v);
                    throw;
                }
            },
            py::arg("chunk"), py::arg("completer"),
            "Queue `chunk` (bytes-like) for the body: True when taken now, False when the request no longer reads "
            "its body (it ended, failed or was closed), or, once 256 KiB wait, an asyncio future of one of those "
            "once the request has taken them. An empty chunk is skipped (True).")
        .def(
            "finish", [](PyUpload& u) { u.feed->finish(); }, "End the body (idempotent).")
        .def(
            "fail", [](PyUpload& u, const std::string& message) { u.feed->fail(message); }, py::arg("message"),
            "Abort the request: its body fails with `message` (the source raised). Idempotent; nothing after "
            "finish().");
}

}  // namespace beast_py
