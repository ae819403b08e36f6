/// A JSON value of a request body, decoded with `JSONDecoder`, which keeps every character of a
/// string. (Foundation's JSONSerialization on Linux drops a U+FEFF that starts a string value, so a
/// user's message or system prompt beginning with one was stored without it.) Numbers, arrays and
/// nested objects are only told apart from strings, booleans and null: no field of the API needs more.
enum JSONValue: Decodable {
    case string(String)
    case null
    case bool(Bool)
    /// A number.
    case other
    /// An array (a field that takes a list, e.g. a conversation's `tools`).
    case array([JSONValue])
    /// The top level, and `message` of POST /api/conversations (a conversation with its first message).
    case object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let fields = try? container.decode([String: JSONValue].self) {
            self = .object(fields)
        } else if let items = try? container.decode([JSONValue].self) {
            self = .array(items)
        } else {
            _ = try container.decode(Double.self)  // anything else is not JSON this decoder accepts
            self = .other
        }
    }
}
