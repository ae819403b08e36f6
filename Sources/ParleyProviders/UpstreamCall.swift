import Foundation
import ParleySSE
import ParleyUpstream

/// The part of a model call shared by the HTTP providers: send with retries and map HTTP and transport
/// failures to `ProviderError` (`UpstreamEventSource` then decodes the SSE body and feeds a parser). Stateless.
struct UpstreamCall: Sendable {
    /// Largest error body read to build an error message (64 KiB).
    static let maxErrorBodyBytes = 64 << 10
    /// Longest upstream detail kept in an error message (500 characters).
    static let maxErrorDetailCharacters = 500

    let client: UpstreamClient
    let retry: RetryPolicy
    /// Values that must never appear in an error message (API keys).
    let secrets: [String]

    // MARK: - Sending

    /// Sends the request, retrying per the policy, and returns a 2xx response.
    func send(_ request: UpstreamRequest) async throws(ProviderError) -> UpstreamResponse {
        var attempt = 0
        while true {
            let failure: ProviderError
            var retryable = false
            do {
                let response = try await client.send(request)
                if (200..<300).contains(response.status) { return response }
                failure = await httpError(response)
                retryable = RetryPolicy.isRetryable(status: response.status)
                if let wait = failure.retryAfter, wait > retry.maxRetryAfter { retryable = false }
            } catch {
                failure = Self.map(error, afterHeaders: false)
                if case .connectionFailed = error { retryable = true }
            }
            guard retryable, attempt < retry.maxRetries else { throw failure.redacting(secrets) }
            let wait = failure.retryAfter ?? retry.backoff * (1 << attempt)
            attempt += 1
            do {
                try await Task.sleep(for: wait)
            } catch {
                throw ProviderError(code: .cancelled, message: "the request was cancelled")
            }
        }
    }

    private func httpError(_ response: UpstreamResponse) async -> ProviderError {
        var body: [UInt8] = []
        do {
            for try await piece in response.body {
                body += piece.prefix(Self.maxErrorBodyBytes - body.count)
                if body.count >= Self.maxErrorBodyBytes { break }
            }
        } catch {}
        let status = response.status
        let detail = Self.errorMessage(fromBody: body)
        var retryAfter: Duration?
        if let header = response.headers["retry-after"], let seconds = Int(header.trimmingCharacters(in: .whitespaces)), seconds >= 0 {
            retryAfter = .seconds(seconds)
        }
        let code: ProviderError.Code
        switch status {
        case 401, 403: code = .upstreamUnauthorized
        case 429: code = .rateLimited
        case 502, 503, 504: code = .upstreamUnavailable
        default: code = .upstreamHTTPError
        }
        return ProviderError(code: code, message: "the model server answered HTTP \(status)" + (detail.isEmpty ? "" : ": \(detail)"),
                             status: status, retryAfter: retryAfter)
    }

    /// The most useful text of an error body: `error.message`, `error` (string), `detail`, `message`, or the text.
    static func errorMessage(fromBody body: [UInt8]) -> String {
        if let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] {
            if let error = object["error"] as? [String: Any], let message = error["message"] as? String { return limited(message) }
            for key in ["error", "detail", "message"] {
                if let message = object[key] as? String { return limited(message) }
            }
        }
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return limited(text)
    }

    private static func limited(_ text: String) -> String {
        text.count > maxErrorDetailCharacters ? String(text.prefix(maxErrorDetailCharacters)) + "…" : text
    }

    static func map(_ error: UpstreamError, afterHeaders: Bool) -> ProviderError {
        switch error {
        case .connectionFailed(let message):
            if afterHeaders {
                return ProviderError(code: .upstreamTruncated,
                                     message: "the stream ended without a finish reason: the connection was lost (\(message))")
            }
            return ProviderError(code: .connectionFailed, message: "could not reach the model server: \(message)")
        case .idleTimeout:
            return ProviderError(code: .upstreamTimeout, message: "the model server sent nothing for too long")
        case .responseTooLarge:
            return ProviderError(code: .responseTooLarge, message: "the model server's response exceeded the size limit")
        case .cancelled:
            return ProviderError(code: .cancelled, message: "the request was cancelled")
        case .other(let message):
            return ProviderError(code: .connectionFailed, message: "the request to the model server failed: \(message)")
        }
    }
}

/// Turns decoded SSE events of one provider's wire format into `ProviderEvent`s.
protocol EventStreamParser {
    /// Events for one SSE event; throws for an error event or a malformed frame.
    mutating func consume(_ event: SSEEvent) throws(ProviderError) -> [ProviderEvent]
    /// True once the stream's terminal event was seen: reading stops.
    var isComplete: Bool { get }
    /// The final events (usage, finish) at the end, or the reason the stream is incomplete.
    func finish() throws(ProviderError) -> [ProviderEvent]
}

/// Runs a provider call as an `AsyncThrowingStream` whose termination cancels the call.
func providerStream(_ body: @escaping @Sendable (AsyncThrowingStream<ProviderEvent, Error>.Continuation) async throws -> Void)
    -> AsyncThrowingStream<ProviderEvent, Error> {
    AsyncThrowingStream { continuation in
        let task = Task {
            do {
                try await body(continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}

/// Reads JSON numbers leniently (JSONSerialization gives NSNumber).
func jsonInt(_ value: Any?) -> Int? {
    if let number = value as? NSNumber, !(value is Bool) { return number.intValue }
    return value as? Int
}

/// A non-empty string, ignoring explicit nulls.
func jsonString(_ value: Any?) -> String? {
    guard let string = value as? String, !string.isEmpty else { return nil }
    return string
}

extension UpstreamCall {
    /// A whole small response body (model lists), with the same retries and error mapping.
    func fetch(_ request: UpstreamRequest) async throws(ProviderError) -> [UInt8] {
        let response = try await send(request)
        var body: [UInt8] = []
        do {
            for try await piece in response.body { body += piece }
        } catch let error as UpstreamError {
            throw Self.map(error, afterHeaders: true)
        } catch {
            throw ProviderError(code: .upstreamError, message: "\(error)")
        }
        // A cancelled consumer sees the body end early without an error: that is not a whole body.
        if Task.isCancelled { throw ProviderError(code: .cancelled, message: "the request was cancelled") }
        return body
    }
}
