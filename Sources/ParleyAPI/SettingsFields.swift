import Foundation
import ParleyHTTP
import ParleyStore

/// The generation settings a client sets (`temperature` 0–2, `top_p` 0–1, `max_tokens`
/// 1–`PARLEY_MAX_TOKENS_LIMIT`), read and range-checked in one place for conversations (create,
/// PATCH) and OpenAI-style calls. Each failure is a 400 naming the field.
package struct SettingsFields: Sendable {
    let maxTokensLimit: Int

    package init(maxTokensLimit: Int) {
        self.maxTokensLimit = maxTokensLimit
    }

    static let temperatureRange = 0.0...2.0
    static let topPRange = 0.0...1.0

    /// The body's settings fields: absent leaves a field unchanged, null clears it.
    package func change(_ request: HTTPRequest) throws(HTTPError) -> GenerationSettingsChange {
        guard !request.body.isEmpty else { return GenerationSettingsChange() }
        let raw: RawFields
        do {
            raw = try JSONDecoder().decode(RawFields.self, from: Data(request.body))
        } catch let error as FieldTypeError {
            throw Self.invalid("'\(error.field)' must be \(error.expected) or null.")
        } catch {
            // Not JSON at all: JSONBody, read by the same handler, names that.
            throw HTTPError(status: 400, code: "invalid_json", message: "The request body is not valid JSON.")
        }
        return GenerationSettingsChange(
            temperature: try raw.temperature.map { (value) throws(HTTPError) in try value.map(temperature) },
            topP: try raw.topP.map { (value) throws(HTTPError) in try value.map(topP) },
            maxTokens: try raw.maxTokens.map { (value) throws(HTTPError) in try value.map(maxTokens) })
    }

    package func temperature(_ value: Double) throws(HTTPError) -> Double {
        guard Self.temperatureRange.contains(value) else { throw Self.invalid("'temperature' must be from 0 to 2.") }
        return value
    }

    package func topP(_ value: Double) throws(HTTPError) -> Double {
        guard Self.topPRange.contains(value) else { throw Self.invalid("'top_p' must be from 0 to 1.") }
        return value
    }

    package func maxTokens(_ value: Int) throws(HTTPError) -> Int {
        guard (1...maxTokensLimit).contains(value) else {
            throw Self.invalid("'max_tokens' must be an integer from 1 to \(maxTokensLimit) (PARLEY_MAX_TOKENS_LIMIT).")
        }
        return value
    }

    static func invalid(_ message: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_request", message: message)
    }

    /// The three fields as sent: nil absent, `.some(nil)` null.
    private struct RawFields: Decodable {
        var temperature: Double??
        var topP: Double??
        var maxTokens: Int??

        enum CodingKeys: String, CodingKey {
            case temperature
            case topP = "top_p"
            case maxTokens = "max_tokens"
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            temperature = try Self.field(container, .temperature, Double.self, "a number")
            topP = try Self.field(container, .topP, Double.self, "a number")
            maxTokens = try Self.field(container, .maxTokens, Int.self, "an integer")
        }

        private static func field<T: Decodable>(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys,
                                                _ type: T.Type, _ expected: String) throws -> T?? {
            guard container.contains(key) else { return nil }
            if try container.decodeNil(forKey: key) { return .some(nil) }
            do {
                return .some(try container.decode(type, forKey: key))
            } catch {
                throw FieldTypeError(field: key.rawValue, expected: expected)
            }
        }
    }

    private struct FieldTypeError: Error {
        let field: String
        let expected: String
    }
}

extension GenerationSettings {
    /// The settings a new conversation starts with: what the change sets (clearing means unset).
    package init(_ change: GenerationSettingsChange) {
        self.init(temperature: change.temperature ?? nil, topP: change.topP ?? nil, maxTokens: change.maxTokens ?? nil)
    }
}
