// TLS set-up: the shared TLS contexts, the host name check, and why a handshake failed.
#pragma once

#include "aliases.hpp"
#include "beast_client/client.hpp"

#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/verify_context.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <memory>
#include <string>

namespace beast_client::detail {

// The TLS context of a TlsConfig, shared by every Client with the same configuration: SSL_CTX_new alone costs
// ~0.5 ms with OpenSSL 3 and loading a CA file more, which a program that creates a Client per request (the
// driver's --connection new) would pay every time. A context is never changed after it is set up, and
// OpenSSL allows SSL_new() on one SSL_CTX from several threads. A CA file is identified by its path and its
// device, inode, size and modification time, so a replaced or edited file is loaded again. Throws as the
// Client constructor documents (std::system_error, std::invalid_argument, TLSError).
std::shared_ptr<ssl::context> tls_context(const TlsConfig& cfg);

// Asio's host_name_verification (DNS names with X509_check_host, IP addresses with X509_check_ip_asc), which
// also records why it failed, so that the handshake error can say "hostname mismatch".
class VerifyHost {
public:
    VerifyHost(const std::string& host, bool ip) : check_(host), ip_(ip) {}
    bool operator()(bool preverified, ssl::verify_context& ctx) const {
        if (check_(preverified, ctx)) return true;
        if (preverified)  // the chain is fine: the leaf certificate is not for this host
            X509_STORE_CTX_set_error(ctx.native_handle(),
                                     ip_ ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
        return false;
    }

private:
    ssl::host_name_verification check_;
    bool ip_;
};

// The reason of a failed handshake: the certificate verification result when that is what failed, a hint
// when the server does not seem to speak TLS.
std::string handshake_failure(const beast::error_code& ec, SSL* ssl);

}  // namespace beast_client::detail
