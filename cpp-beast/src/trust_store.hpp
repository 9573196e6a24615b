// The system's trust store, one per process: used by the client's TLS contexts and by floor-driver.
#pragma once

#include <openssl/x509.h>

namespace beast_client::detail {

// OpenSSL's default verify paths (on Debian /etc/ssl/certs), loaded by the first call and shared by every
// caller after it: parsing Debian's ~140 root certificates takes 50-100 ms with OpenSSL 3, too much for every
// new client. An X509_STORE is reference-counted and safe to use from several threads (its lookups lock); a
// caller takes its own reference with SSL_CTX_set1_cert_store(). Never freed nor re-read: a change to the
// system's store is seen by the next process. Null when the store cannot be loaded.
X509_STORE* system_trust_store();

}  // namespace beast_client::detail
