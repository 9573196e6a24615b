// The test PKI of the TLS tests: a test CA, server certificates for localhost / 127.0.0.1, an expired one, one
// for another name, a self-signed one and one from another CA, generated once per test process with OpenSSL's
// C API (EC P-256 keys). The only file written is the CA's certificate (a PEM bundle for TlsConfig::ca_file),
// in a temporary directory removed at exit.
#pragma once

#include "beast_client/client.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tls_test {

using beast_client::TlsConfig;

struct KeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
    void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

[[noreturn]] inline void openssl_fail(const char* what) {
    char buf[256];
    ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
    throw std::runtime_error(std::string(what) + ": " + buf);
}

inline Key make_key() {
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nullptr),
                                                                    EVP_PKEY_CTX_free);
    EVP_PKEY* key = nullptr;
    if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
        EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx.get(), NID_X9_62_prime256v1) != 1 ||
        EVP_PKEY_keygen(ctx.get(), &key) != 1)
        openssl_fail("EC key generation");
    return Key(key);
}

inline void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (!ext || X509_add_ext(cert, ext, -1) != 1) openssl_fail("certificate extension");
    X509_EXTENSION_free(ext);
}

struct Identity {
    Cert cert;
    Key key;
};

// A certificate for `key`, signed by `issuer` (self-signed when issuer is null). `sans`: the
// subjectAltName ("DNS:localhost,IP:127.0.0.1"), empty for a CA. Valid from now+from_s to now+to_s.
inline Cert make_cert(EVP_PKEY* key, const std::string& cn, const Identity* issuer, bool ca, const std::string& sans,
                      long from_s = -3600, long to_s = 86400) {
    static std::atomic<long> serial{1000};
    Cert cert(X509_new());
    X509* c = cert.get();
    X509_set_version(c, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(c), serial++);
    X509_gmtime_adj(X509_getm_notBefore(c), from_s);
    X509_gmtime_adj(X509_getm_notAfter(c), to_s);
    X509_NAME* name = X509_get_subject_name(c);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer->cert.get()) : name);
    X509_set_pubkey(c, key);
    X509* issuer_cert = issuer ? issuer->cert.get() : c;
    add_ext(c, issuer_cert, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
    add_ext(c, issuer_cert, NID_key_usage, ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
    add_ext(c, issuer_cert, NID_subject_key_identifier, "hash");
    if (issuer) add_ext(c, issuer_cert, NID_authority_key_identifier, "keyid:always");
    if (!ca) add_ext(c, issuer_cert, NID_ext_key_usage, "serverAuth");
    if (!sans.empty()) add_ext(c, issuer_cert, NID_subject_alt_name, sans);
    if (X509_sign(c, issuer ? issuer->key.get() : key, EVP_sha256()) == 0) openssl_fail("X509_sign");
    return cert;
}

inline Identity make_ca(const std::string& cn) {
    Identity ca{nullptr, make_key()};
    ca.cert = make_cert(ca.key.get(), cn, nullptr, true, "");
    return ca;
}

inline Identity make_leaf(const Identity* issuer, const std::string& sans, long from_s = -3600, long to_s = 86400) {
    Identity leaf{nullptr, make_key()};
    leaf.cert = make_cert(leaf.key.get(), "clientbench test server", issuer, false, sans, from_s, to_s);
    return leaf;
}

inline Identity make_self_signed() {  // a leaf certificate that is its own issuer
    Identity self{nullptr, make_key()};
    self.cert = make_cert(self.key.get(), "self-signed", nullptr, false, "DNS:localhost,IP:127.0.0.1");
    return self;
}

inline std::string pem(X509* cert) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    PEM_write_bio_X509(bio.get(), cert);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
}

// Generated once for all tests.
struct Pki {
    Identity ca = make_ca("clientbench test CA");
    Identity other_ca = make_ca("another test CA");
    Identity server = make_leaf(&ca, "DNS:localhost,IP:127.0.0.1,IP:::1");
    Identity dns_only = make_leaf(&ca, "DNS:localhost");
    Identity wrong_name = make_leaf(&ca, "DNS:other.example");
    Identity expired = make_leaf(&ca, "DNS:localhost,IP:127.0.0.1", -2 * 86400, -86400);
    Identity untrusted = make_leaf(&other_ca, "DNS:localhost,IP:127.0.0.1");
    Identity self_signed = make_self_signed();
    std::filesystem::path dir;
    std::string ca_file;  // the test CA's certificate (PEM)

    Pki() {
        char tmpl[] = "/tmp/beast-tls-test-XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        dir = tmpl;
        ca_file = (dir / "ca.pem").string();
        std::ofstream(ca_file) << pem(ca.cert.get());
    }
    ~Pki() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

inline Pki& pki() {
    static Pki instance;
    return instance;
}

inline TlsConfig trust_test_ca() { return TlsConfig{true, pki().ca_file}; }

}  // namespace tls_test
