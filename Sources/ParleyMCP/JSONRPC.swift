import ParleyPrimitives

/// JSON-RPC 2.0 as MCP uses it: Parley's requests carry integer ids; messages are `JSON` values.
enum JSONRPC {
    /// JSON-RPC's "method not found", the answer to a server request Parley does not serve.
    static let methodNotFound: Int64 = -32601

    /// One message from a server.
    enum Incoming: Sendable, Equatable {
        /// The answer to one of Parley's requests: a result, or an error (code, message).
        case response(id: JSON, result: Result<JSON, RemoteError>)
        /// A request from the server (`ping`, ...), which Parley must answer.
        case request(id: JSON, method: String, params: JSON?)
        case notification(method: String, params: JSON?)

        /// Classifies a parsed message; nil for something that is not JSON-RPC 2.0.
        init?(_ message: JSON) {
            guard let fields = message.objectValue else { return nil }
            let id = fields["id"]
            if let method = fields["method"]?.stringValue {
                if let id, id != .null { self = .request(id: id, method: method, params: fields["params"]) }
                else { self = .notification(method: method, params: fields["params"]) }
                return
            }
            guard let id else { return nil }
            if let result = fields["result"] {
                self = .response(id: id, result: .success(result))
            } else if let error = fields["error"]?.objectValue {
                let code = error["code"].flatMap { $0.doubleValue }.map { Int($0) } ?? 0
                let message = error["message"]?.stringValue ?? "no message"
                self = .response(id: id, result: .failure(RemoteError(code: code, message: message, data: error["data"])))
            } else {
                return nil
            }
        }
    }

    /// A JSON-RPC error object from a server.
    struct RemoteError: Error, Sendable, Equatable {
        var code: Int
        var message: String
        var data: JSON?
    }

    static func request(id: Int64, method: String, params: JSON?) -> JSON {
        var fields: [String: JSON] = ["jsonrpc": .string("2.0"), "id": .integer(id), "method": .string(method)]
        if let params { fields["params"] = params }
        return .object(fields)
    }

    static func notification(method: String, params: JSON?) -> JSON {
        var fields: [String: JSON] = ["jsonrpc": .string("2.0"), "method": .string(method)]
        if let params { fields["params"] = params }
        return .object(fields)
    }

    static func response(id: JSON, result: JSON) -> JSON {
        .object(["jsonrpc": .string("2.0"), "id": id, "result": result])
    }

    static func errorResponse(id: JSON, code: Int64, message: String) -> JSON {
        .object(["jsonrpc": .string("2.0"), "id": id,
                 "error": .object(["code": .integer(code), "message": .string(message)])])
    }

    /// The messages in one received JSON text: one object, or a batch (an array of them).
    static func messages(in bytes: some Collection<UInt8>) -> [JSON]? {
        guard let value = JSON(parsing: bytes) else { return nil }
        if let items = value.arrayValue { return items }
        return [value]
    }
}
