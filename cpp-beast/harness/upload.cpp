// The request body and its /upload line (upload.hpp).
#include "upload.hpp"

#include <openssl/evp.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

std::string harness::upload_body(std::size_t size) {
    std::string body(size, '\0');
    for (std::size_t i = 0; i < size; ++i) body[i] = static_cast<char>('a' + i % 26);
    return body;
}

std::string harness::upload_digest_line(std::string_view body) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(body.data(), body.size(), md, &length, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL cannot compute a SHA-256 digest");
    static const char* hex = "0123456789abcdef";
    std::string line = std::to_string(body.size()) + ' ';
    for (unsigned int i = 0; i < length; ++i) {
        line += hex[md[i] >> 4];
        line += hex[md[i] & 0xf];
    }
    return line;
}
