#ifndef PUSHLINE_COPENSSL_SHIM_H
#define PUSHLINE_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pkcs12.h>
#include <openssl/ecdsa.h>
#include <openssl/bio.h>
#include <openssl/rand.h>

// Swift cannot import function-like macros; these adapters give them names.
static inline long pushline_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline long pushline_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long pushline_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline long pushline_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}
static inline int pushline_BIO_should_retry(BIO *bio) {
    return BIO_should_retry(bio);
}
static inline int pushline_sk_X509_num(const STACK_OF(X509) *sk) {
    return sk_X509_num(sk);
}
static inline X509 *pushline_sk_X509_value(const STACK_OF(X509) *sk, int i) {
    return sk_X509_value(sk, i);
}
static inline void pushline_sk_X509_pop_free(STACK_OF(X509) *sk) {
    sk_X509_pop_free(sk, X509_free);
}
#endif
