import ParleyHTTP

/// The whole HTTP API in one place; it reads like the API reference (docs/api.md).
struct APIRoutes {
    let conversations: ConversationHandlers
    let messages: MessageHandlers

    func register(in router: inout Router) {
        router.on("GET", "/api/health") { _ in .json(["status": "ok"]) }
        router.on("GET", "/api/models", messages.models)

        router.on("POST", "/api/conversations", conversations.create)
        router.on("GET", "/api/conversations", conversations.list)
        router.on("GET", "/api/conversations/:id", conversations.show)
        router.on("PATCH", "/api/conversations/:id", conversations.update)
        router.on("DELETE", "/api/conversations/:id", conversations.delete)
        router.on("PUT", "/api/conversations/:id/current", conversations.switchBranch)

        router.on("POST", "/api/conversations/:id/messages", messages.send)
        router.on("GET", "/api/messages/:id", messages.show)
        router.on("GET", "/api/messages/:id/stream", messages.stream)
        router.on("POST", "/api/messages/:id/stop", messages.stop)
        router.on("POST", "/api/messages/:id/regenerate", messages.regenerate)
        router.on("POST", "/api/messages/:id/continue", messages.continueMessage)
    }
}
