import Foundation
import ParleyHTTP

/// A request's JSON object, read field by field so every error names the field at fault. Decoded
/// with `JSONDecoder`, which keeps every character the client sent (see `JSONValue`).
package struct JSONBody {
    private let members: [String: JSONValue]
    /// Put before a field's name in errors: `message.` for the fields of a nested object.
    private let path: String

    package init(_ request: HTTPRequest) throws(HTTPError) {
        guard !request.body.isEmpty else {
            members = [:]
            path = ""
            return
        }
        let parsed: JSONValue
        do {
            parsed = try JSONDecoder().decode(JSONValue.self, from: Data(request.body))
        } catch {
            throw HTTPError(status: 400, code: "invalid_json", message: "The request body is not valid JSON.")
        }
        guard case .object(let object) = parsed else {
            throw HTTPError(status: 400, code: "invalid_json", message: "The request body must be a JSON object.")
        }
        members = object
        path = ""
    }

    private init(members: [String: JSONValue], path: String) {
        self.members = members
        self.path = path
    }

    /// An optional object field, read the same way (its errors name `field.inner`): absent and null
    /// both read as nil.
    package func object(_ field: String) throws(HTTPError) -> JSONBody? {
        switch members[field] {
        case nil, .null: return nil
        case .object(let fields): return JSONBody(members: fields, path: path + field + ".")
        default: throw wrongType(field, "an object")
        }
    }

    /// The fields present, sorted (a route that takes a fixed set names the first unknown one).
    package var fields: [String] { members.keys.sorted() }

    /// Whether the field is present (even as null).
    package func has(_ field: String) -> Bool { members[field] != nil }

    /// An optional string field: absent and null both read as nil.
    package func string(_ field: String) throws(HTTPError) -> String? {
        switch members[field] {
        case nil, .null: return nil
        case .string(let value): return value
        default: throw wrongType(field, "a string")
        }
    }

    /// A required, non-empty string field.
    package func requiredString(_ field: String) throws(HTTPError) -> String {
        guard let value = try string(field) else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'\(path)\(field)' is required.")
        }
        guard !value.isEmpty else {
            throw HTTPError(status: 400, code: "invalid_request", message: "'\(path)\(field)' must not be empty.")
        }
        return value
    }

    /// An optional boolean field: absent and null both read as nil.
    package func bool(_ field: String) throws(HTTPError) -> Bool? {
        switch members[field] {
        case nil, .null: return nil
        case .bool(let value): return value
        default: throw wrongType(field, "true or false")
        }
    }

    /// An optional array of strings: absent and null both read as nil; at most `maxCount` items, each at
    /// most `maxLength` characters.
    package func strings(_ field: String, maxCount: Int, maxLength: Int) throws(HTTPError) -> [String]? {
        switch members[field] {
        case nil, .null: return nil
        case .array(let items):
            guard items.count <= maxCount else {
                throw HTTPError(status: 400, code: "invalid_request",
                                message: "'\(path)\(field)' may hold at most \(maxCount) items.")
            }
            var values: [String] = []
            for item in items {
                guard case .string(let value) = item, !value.isEmpty, value.count <= maxLength else {
                    throw wrongType(field, "an array of non-empty strings of at most \(maxLength) characters")
                }
                values.append(value)
            }
            return values
        default: throw wrongType(field, "an array of strings")
        }
    }

    private func wrongType(_ field: String, _ expected: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_request", message: "'\(path)\(field)' must be \(expected).")
    }
}
