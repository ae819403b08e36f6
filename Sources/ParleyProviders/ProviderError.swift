import ParleyOutcome

/// A failed model call, in terms the UI can show. Never contains an API key: messages built from
/// upstream bodies are redacted against the provider's secrets before they are thrown.
public struct ProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong; the raw value is the `error.code` stored with the message and sent to clients.
    /// The same codes the store keeps (`ReplyErrorCode`): a provider throws the `upstream…` ones.
    public typealias Code = ReplyErrorCode

    public var code: Code
    public var message: String
    /// The upstream HTTP status, when the failure was an HTTP error response.
    public var status: Int?
    /// How long the upstream asked us to wait (429 `Retry-After`).
    public var retryAfter: Duration?

    public init(code: Code, message: String, status: Int? = nil, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
    }

    public var description: String {
        "\(code.rawValue): \(message)" + (status.map { " (HTTP \($0))" } ?? "")
    }

    /// The same error with every occurrence of the given secrets replaced.
    func redacting(_ secrets: [String]) -> ProviderError {
        var copy = self
        for secret in secrets where secret.count >= 4 {
            copy.message = copy.message.replacingOccurrences(of: secret, with: "[redacted]")
        }
        return copy
    }
}

extension String {
    /// Literal replacement without Foundation.
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.range(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
