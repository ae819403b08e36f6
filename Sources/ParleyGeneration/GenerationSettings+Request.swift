import ParleyProviders
import ParleyStore

extension ChatRequest {
    /// A request carrying a conversation's generation settings (temperature, top_p, max_tokens) and
    /// one call's options.
    init(model: String, messages: [ChatMessage], prefill: String? = nil, settings: GenerationSettings,
         options: ChatOptions = ChatOptions(), tools: [ToolSpec] = []) {
        self.init(model: model, messages: messages, prefill: prefill, maxTokens: settings.maxTokens,
                  temperature: settings.temperature, topP: settings.topP, options: options, tools: tools)
    }
}
