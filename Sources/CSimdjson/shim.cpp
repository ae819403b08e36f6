// See include/parley_simdjson.h. A dom::element is a reference into its parser's document (16
// trivially copyable bytes), handed to C as parley_json_value and back.
#include "parley_simdjson.h"

#include <cstring>
#include <memory>
#include <new>
#include <simdjson.h>
#include <type_traits>

using simdjson::dom::element;
using simdjson::dom::element_type;

static_assert(sizeof(element) == sizeof(parley_json_value), "dom::element no longer fits parley_json_value");
static_assert(std::is_trivially_copyable<element>::value, "dom::element is no longer trivially copyable");

struct parley_json_parser {
    simdjson::dom::parser parser;
    /// The bytes, followed by simdjson's padding (it reads past the end in blocks).
    std::unique_ptr<uint8_t[]> buffer;
    size_t capacity = 0;
};

static parley_json_value wrap(const element &value) {
    parley_json_value out;
    std::memcpy(&out, &value, sizeof out);
    return out;
}

static element unwrap(parley_json_value value) {
    element out;
    std::memcpy(static_cast<void *>(&out), &value, sizeof out);
    return out;
}

extern "C" parley_json_parser *parley_json_parser_new(size_t max_depth) {
    parley_json_parser *parser = new (std::nothrow) parley_json_parser();
    // Small at first (one parser per live stream; chunks are a few hundred bytes): simdjson grows it
    // for a bigger document, keeping the depth given here.
    if (parser != nullptr && parser->parser.allocate(1024, max_depth) != simdjson::SUCCESS) {
        delete parser;
        return nullptr;
    }
    return parser;
}

extern "C" void parley_json_parser_free(parley_json_parser *parser) {
    delete parser;
}

extern "C" bool parley_json_parse(parley_json_parser *parser, const uint8_t *bytes, size_t count,
                                  parley_json_value *root) {
    if (parser == nullptr || (bytes == nullptr && count > 0)) return false;
    if (parser->capacity < count + simdjson::SIMDJSON_PADDING) {
        size_t capacity = count + simdjson::SIMDJSON_PADDING;
        if (capacity < 1024) capacity = 1024;
        parser->buffer.reset(new (std::nothrow) uint8_t[capacity]);
        parser->capacity = parser->buffer ? capacity : 0;
        if (!parser->buffer) return false;
    }
    if (count > 0) std::memcpy(parser->buffer.get(), bytes, count);
    std::memset(parser->buffer.get() + count, 0, simdjson::SIMDJSON_PADDING);
    element value;
    if (parser->parser.parse(parser->buffer.get(), count, false).get(value) != simdjson::SUCCESS) return false;
    *root = wrap(value);
    return true;
}

extern "C" parley_json_kind parley_json_kind_of(parley_json_value value) {
    switch (unwrap(value).type()) {
    case element_type::ARRAY: return PARLEY_JSON_ARRAY;
    case element_type::OBJECT: return PARLEY_JSON_OBJECT;
    case element_type::INT64: return PARLEY_JSON_INT64;
    case element_type::UINT64: return PARLEY_JSON_UINT64;
    case element_type::DOUBLE: return PARLEY_JSON_DOUBLE;
    case element_type::STRING: return PARLEY_JSON_STRING;
    case element_type::BOOL: return PARLEY_JSON_BOOL;
    case element_type::NULL_VALUE: return PARLEY_JSON_NULL;
    }
    return PARLEY_JSON_NULL;
}

extern "C" bool parley_json_field(parley_json_value object, const char *key, size_t count, parley_json_value *out) {
    simdjson::dom::object fields;
    if (unwrap(object).get(fields) != simdjson::SUCCESS) return false;
    // The first field of that name, as JSONDecoder reads a repeated key.
    element value;
    if (fields.at_key(std::string_view(key, count)).get(value) != simdjson::SUCCESS) return false;
    *out = wrap(value);
    return true;
}

extern "C" bool parley_json_string(parley_json_value value, const char **bytes, size_t *count) {
    std::string_view text;
    if (unwrap(value).get(text) != simdjson::SUCCESS) return false;
    *bytes = text.data();
    *count = text.size();
    return true;
}

extern "C" bool parley_json_int64(parley_json_value value, int64_t *out) {
    return unwrap(value).get(*out) == simdjson::SUCCESS;
}

extern "C" bool parley_json_uint64(parley_json_value value, uint64_t *out) {
    return unwrap(value).get(*out) == simdjson::SUCCESS;
}

extern "C" bool parley_json_double(parley_json_value value, double *out) {
    return unwrap(value).get(*out) == simdjson::SUCCESS;
}

extern "C" bool parley_json_bool(parley_json_value value, bool *out) {
    return unwrap(value).get(*out) == simdjson::SUCCESS;
}

extern "C" size_t parley_json_items(parley_json_value array, parley_json_value *items, size_t max) {
    simdjson::dom::array values;
    if (unwrap(array).get(values) != simdjson::SUCCESS) return 0;
    size_t count = 0;
    for (element item : values) {
        if (count < max) items[count] = wrap(item);
        count++;
    }
    return count;
}
