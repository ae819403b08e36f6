import Foundation
import ParleyProviders

/// The options of a `POST /v1/chat/completions` body beyond its messages and sampling settings,
/// read and range-checked here (each failure a 400 naming the parameter, as OpenAI does) and passed
/// on to the provider as given; whether the chosen provider can honour them is its own answer
/// (`ChatProvider.refusal`). The tool-calling parameters are read by `OpenAIChatTools`; the
/// deprecated `functions` and `function_call` are refused rather than dropped; any other unknown key is
/// ignored, as before.
enum OpenAIChatOptions {
    /// `stop`: at most this many sequences (OpenAI's limit).
    static let maxStopSequences = 4
    /// `user`: at most this many characters.
    static let maxUserLength = 256
    /// `top_logprobs`: 0 through this (OpenAI's limit).
    static let maxTopLogprobs = 20
    /// Parameters Parley does not relay (OpenAI's deprecated forms of `tools` and `tool_choice`):
    /// refused by name, never silently dropped.
    static let notSupported = ["functions", "function_call"]

    /// The options of `fields`, read from the whole `body` by `OpenAIChatRequest` (in the same pass as
    /// its messages: a body may carry megabytes of base64), range-checked.
    static func options(_ fields: Fields, body: [UInt8]) throws(OpenAIError) -> ChatOptions {
        if let stop = fields.stop {
            guard stop.sequences.count <= maxStopSequences else {
                throw OpenAIError.invalid("'stop' holds at most \(maxStopSequences) sequences.", param: "stop")
            }
            guard stop.sequences.allSatisfy({ !$0.isEmpty }) else {
                throw OpenAIError.invalid("'stop' sequences must not be empty.", param: "stop")
            }
        }
        for (value, name) in [(fields.presencePenalty, "presence_penalty"), (fields.frequencyPenalty, "frequency_penalty")] {
            if let value, !(-2...2).contains(value) {
                throw OpenAIError.invalid("'\(name)' must be between -2 and 2.", param: name)
            }
        }
        if let top = fields.topLogprobs {
            guard (0...maxTopLogprobs).contains(top) else {
                throw OpenAIError.invalid("'top_logprobs' must be between 0 and \(maxTopLogprobs).", param: "top_logprobs")
            }
            guard fields.logprobs == true else {
                throw OpenAIError.invalid("'top_logprobs' requires 'logprobs': true.", param: "top_logprobs")
            }
        }
        if let user = fields.user, user.count > maxUserLength {
            throw OpenAIError.invalid("'user' must be at most \(maxUserLength) characters.", param: "user")
        }
        var format: ChatOptions.ResponseFormat?
        if let kind = fields.responseFormat, let json = responseFormatJSON(body) {
            format = ChatOptions.ResponseFormat(kind: kind, json: json)
        }
        return ChatOptions(stop: fields.stop, seed: fields.seed, presencePenalty: fields.presencePenalty,
                           frequencyPenalty: fields.frequencyPenalty, logprobs: fields.logprobs,
                           topLogprobs: fields.topLogprobs, user: fields.user, responseFormat: format)
    }

    /// `response_format` as JSON text for the upstream, read and written by Foundation's JSON parser
    /// (never by hand): the same value, its keys sorted (so an object's order is deterministic, not the
    /// client's). nil only if the body, already accepted by `JSONDecoder`, is not an object with it.
    static func responseFormatJSON(_ body: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let format = object["response_format"],
              let data = try? JSONSerialization.data(withJSONObject: format, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - Decoding

    struct Fields: Decodable {
        let stop: ChatOptions.Stop?
        let seed: Int?
        let presencePenalty: Double?
        let frequencyPenalty: Double?
        let logprobs: Bool?
        let topLogprobs: Int?
        let user: String?
        let responseFormat: ChatOptions.ResponseFormat.Kind?

        private struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            for name in OpenAIChatOptions.notSupported {
                let key = Key(stringValue: name)
                if container.contains(key), try !container.decodeNil(forKey: key) {
                    throw OpenAIChatRequest.FieldError(field: name, message: "'\(name)' is not supported: OpenAI deprecated "
                                        + "it; use 'tools' and 'tool_choice'.")
                }
            }
            func optional<T: Decodable>(_ name: String, _ expected: String) throws -> T? {
                let key = Key(stringValue: name)
                guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
                do {
                    return try container.decode(T.self, forKey: key)
                } catch {
                    throw OpenAIChatRequest.FieldError(field: name, message: "'\(name)' must be \(expected).")
                }
            }
            if let text: String = try? optional("stop", "") {
                stop = .one(text)
            } else {
                let list: [String]? = try optional("stop", "a string or an array of up to "
                                                   + "\(OpenAIChatOptions.maxStopSequences) strings")
                stop = list.map { .many($0) }
            }
            seed = try optional("seed", "an integer")
            presencePenalty = try optional("presence_penalty", "a number")
            frequencyPenalty = try optional("frequency_penalty", "a number")
            logprobs = try optional("logprobs", "true or false")
            topLogprobs = try optional("top_logprobs", "an integer")
            user = try optional("user", "a string")
            let format: ResponseFormat? = try optional("response_format", "an object with a 'type': text, json_object "
                                                       + "or json_schema (with a 'json_schema' object naming a 'name')")
            responseFormat = format?.type
        }
    }

    /// `response_format` as far as Parley checks it; the rest travels as the client wrote it.
    private struct ResponseFormat: Decodable {
        struct Schema: Decodable {
            let name: String
        }

        let type: ChatOptions.ResponseFormat.Kind

        enum CodingKeys: String, CodingKey {
            case type
            case jsonSchema = "json_schema"
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let kind = ChatOptions.ResponseFormat.Kind(rawValue: try container.decode(String.self, forKey: .type))
            else { throw OpenAIChatRequest.FieldError(field: "response_format", message: "") }
            if kind == .jsonSchema {
                let schema = try container.decode(Schema.self, forKey: .jsonSchema)
                guard !schema.name.isEmpty else { throw OpenAIChatRequest.FieldError(field: "response_format", message: "") }
            }
            type = kind
        }
    }
}
