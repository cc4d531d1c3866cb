#pragma once
// Standalone GPU build only (scripts/gpu/zerobuf_gpu.sh puts backends/hw/cuda/standalone first on
// the include path; the CMake build never sees it). The GPU machines have OpenSSL 3's runtime
// (libcrypto.so.3) but no libssl-dev headers. These are the declarations engine/auth uses, copied
// from OpenSSL 3's public headers (include/openssl/{evp,crypto,params,core,core_names}.h): an ABI
// OpenSSL keeps stable across 3.x. Nothing else.
#include <cstddef>

extern "C" {
typedef struct ossl_lib_ctx_st OSSL_LIB_CTX;
typedef struct evp_mac_st EVP_MAC;
typedef struct evp_mac_ctx_st EVP_MAC_CTX;
struct ossl_param_st {
  const char* key;
  unsigned int data_type;
  void* data;
  size_t data_size;
  size_t return_size;
};
typedef struct ossl_param_st OSSL_PARAM;

OSSL_PARAM OSSL_PARAM_construct_utf8_string(const char* key, char* buf, size_t bsize);
OSSL_PARAM OSSL_PARAM_construct_end(void);
EVP_MAC* EVP_MAC_fetch(OSSL_LIB_CTX* libctx, const char* algorithm, const char* properties);
EVP_MAC_CTX* EVP_MAC_CTX_new(EVP_MAC* mac);
void EVP_MAC_CTX_free(EVP_MAC_CTX* ctx);
EVP_MAC_CTX* EVP_MAC_CTX_dup(const EVP_MAC_CTX* src);
int EVP_MAC_init(EVP_MAC_CTX* ctx, const unsigned char* key, size_t keylen, const OSSL_PARAM params[]);
int EVP_MAC_update(EVP_MAC_CTX* ctx, const unsigned char* data, size_t datalen);
int EVP_MAC_final(EVP_MAC_CTX* ctx, unsigned char* out, size_t* outl, size_t outsize);
unsigned char* EVP_Q_mac(OSSL_LIB_CTX* libctx, const char* name, const char* propq, const char* subalg,
                         const OSSL_PARAM* params, const void* key, size_t keylen, const unsigned char* data,
                         size_t datalen, unsigned char* out, size_t outsize, size_t* outlen);
int CRYPTO_memcmp(const void* in_a, const void* in_b, size_t len);
void OPENSSL_cleanse(void* ptr, size_t len);
}

#define EVP_MAX_MD_SIZE 64
#define OSSL_MAC_PARAM_DIGEST "digest"
