// A plain C face on simdjson's DOM parser (Debian's libsimdjson 3.0, C++), so Swift modules read
// upstream frames with it without C++ interop (which every client of such a module would then need).
// It only walks what simdjson parsed: no JSON is read here by hand.
#ifndef PARLEY_SIMDJSON_H
#define PARLEY_SIMDJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A simdjson parser with its buffers, reused document after document. One owner at a time.
typedef struct parley_json_parser parley_json_parser;

/// A value of the last document parsed: valid until that parser parses again or is freed.
typedef struct {
    uint64_t opaque[2];
} parley_json_value;

typedef enum {
    PARLEY_JSON_NULL = 0,
    PARLEY_JSON_BOOL,
    PARLEY_JSON_INT64,
    PARLEY_JSON_UINT64,
    PARLEY_JSON_DOUBLE,
    PARLEY_JSON_STRING,
    PARLEY_JSON_ARRAY,
    PARLEY_JSON_OBJECT
} parley_json_kind;

/// A new parser that refuses documents nested deeper than `max_depth`, or NULL when memory is short.
parley_json_parser *parley_json_parser_new(size_t max_depth);
void parley_json_parser_free(parley_json_parser *parser);

/// Parses `count` bytes (copied into the parser's padded buffer first): false when they are not one
/// JSON value, as simdjson judges (strict RFC 8259: UTF-8 checked, lone surrogate escapes refused).
bool parley_json_parse(parley_json_parser *parser, const uint8_t *bytes, size_t count, parley_json_value *root);

parley_json_kind parley_json_kind_of(parley_json_value value);

/// The object's first field named `key` (`count` bytes): false when absent or not an object.
bool parley_json_field(parley_json_value object, const char *key, size_t count, parley_json_value *out);

/// A string's UTF-8 bytes (escapes decoded, may hold NUL): false when not a string.
bool parley_json_string(parley_json_value value, const char **bytes, size_t *count);

bool parley_json_int64(parley_json_value value, int64_t *out);
bool parley_json_uint64(parley_json_value value, uint64_t *out);
/// Any number as a double (simdjson's conversion): false when not a number.
bool parley_json_double(parley_json_value value, double *out);
bool parley_json_bool(parley_json_value value, bool *out);

/// An array's item count, and its first `max` items written to `items`; 0 for a non-array.
size_t parley_json_items(parley_json_value array, parley_json_value *items, size_t max);

#ifdef __cplusplus
}
#endif

#endif
