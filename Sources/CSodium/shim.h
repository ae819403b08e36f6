#include <sodium.h>

/* Macros Swift cannot import as constants. */
static inline size_t parley_pwhash_strbytes(void) { return crypto_pwhash_STRBYTES; }
static inline unsigned long long parley_pwhash_opslimit_interactive(void) { return crypto_pwhash_OPSLIMIT_INTERACTIVE; }
static inline size_t parley_pwhash_memlimit_interactive(void) { return crypto_pwhash_MEMLIMIT_INTERACTIVE; }
static inline size_t parley_hash_sha256_bytes(void) { return crypto_hash_sha256_BYTES; }
