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
static inline long pushline_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}
static inline int pushline_sk_X509_num(const STACK_OF(X509) *sk) {
    return sk_X509_num(sk);
}
static inline X509 *pushline_sk_X509_value(const STACK_OF(X509) *sk, int i) {
    return sk_X509_value(sk, i);
}
static inline long pushline_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return SSL_CTX_add1_chain_cert(ctx, cert);
}
// SSL_OP_* are built by a function-like macro (SSL_OP_BIT), which Swift cannot import.
static inline void pushline_SSL_CTX_disable_renegotiation(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
}
static inline void pushline_BIO_set_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}
static inline void pushline_BIO_clear_retry_flags(BIO *bio) {
    BIO_clear_retry_flags(bio);
}
static inline int pushline_sk_X509_push(STACK_OF(X509) *sk, X509 *cert) {
    return sk_X509_push(sk, cert);
}
static inline STACK_OF(X509) *pushline_sk_X509_new_null(void) {
    return sk_X509_new_null();
}
static inline void pushline_sk_X509_free(STACK_OF(X509) *sk) {
    sk_X509_free(sk);
}
// EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen, which Swift cannot call.
static inline EVP_PKEY *pushline_EVP_EC_gen_P256(void) {
    return EVP_EC_gen("P-256");
}

// ALPN selection for servers: `arg` is the server's protocol list in wire format
// (length-prefixed), owned by the TLSContext for as long as the SSL_CTX lives.
// No overlap with the client's list is a fatal no_application_protocol alert: the
// server only speaks the protocols it was configured with.
typedef struct {
    const unsigned char *protocols;
    unsigned int length;
} pushline_alpn_protocols;

static inline int pushline_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                       const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl;
    const pushline_alpn_protocols *server = (const pushline_alpn_protocols *)arg;
    unsigned char *selected = NULL;
    unsigned char selectedLength = 0;
    int status = SSL_select_next_proto(&selected, &selectedLength, server->protocols, server->length, in, inlen);
    if (status != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = selected;
    *outlen = selectedLength;
    return SSL_TLSEXT_ERR_OK;
}

static inline void pushline_SSL_CTX_set_alpn_select(SSL_CTX *ctx, pushline_alpn_protocols *protocols) {
    SSL_CTX_set_alpn_select_cb(ctx, pushline_alpn_select, protocols);
}
#endif
