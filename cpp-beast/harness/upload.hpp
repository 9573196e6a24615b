// Request bodies of `--method POST|PUT --body-size B` (docs/raw-format.md, "Request bodies"): the body, and
// the line the server's /upload endpoint answers for it, each built once per run.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace harness {

/// B bytes, byte i = 'a' + (i mod 26).
std::string upload_body(std::size_t size);

/// "<length> <sha256 hex>" of `body` (OpenSSL's SHA-256).
std::string upload_digest_line(std::string_view body);

}  // namespace harness
