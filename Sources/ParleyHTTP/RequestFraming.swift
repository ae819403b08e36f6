import Foundation

/// Parley's first look at how a request says where its body ends, before any body byte is read.
/// libmicrohttpd 0.9.75 runs a request with both Content-Length and chunked framing and then runs the
/// bytes after it as a second, smuggled request; it takes the first of two Content-Lengths; it reads a
/// name with a space before the colon as another header; and it waits for ever on a transfer coding it
/// does not know. Each of these is refused here, and the connection is closed after the answer.
enum RequestFraming {
    /// Why the request cannot be read safely, or nil. `headers` are the raw fields, repeats included.
    static func problem(in headers: [HeaderField]) -> HTTPError? {
        var contentLengths: [String] = []
        var transferCodings: [String] = []
        for field in headers {
            guard isToken(field.name) else {
                return .badRequest("Malformed header name \(quoted(field.name)).")
            }
            switch field.key {
            case "content-length": contentLengths += listItems(field.value)
            case "transfer-encoding": transferCodings += listItems(field.value).map { $0.lowercased() }
            default: break
            }
        }
        if !transferCodings.isEmpty {
            if !contentLengths.isEmpty {
                return .badRequest("A request may not carry both Content-Length and Transfer-Encoding.")
            }
            if transferCodings != ["chunked"] {
                return HTTPError(
                    status: 501, code: "not_implemented",
                    message: "Transfer-Encoding \(quoted(transferCodings.joined(separator: ", "))) is not "
                        + "supported; send Content-Length or chunked.")
            }
        }
        if Set(contentLengths).count > 1 {
            return .badRequest("Conflicting Content-Length values.")
        }
        return nil
    }

    /// RFC 9110 token characters: a header name has no spaces, separators or controls.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    private static func listItems(_ value: String) -> [String] {
        value.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
    }

    private static func quoted(_ text: String) -> String {
        "'" + String(text.prefix(64)) + "'"
    }
}
