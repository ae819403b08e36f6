import ParleyAPI
import ParleyAccounts
import ParleyConversations
import ParleyEvents
import ParleyFiles
import ParleyHTTP
import ParleyOpenAICompat
import ParleyQuotas
import ParleyTools
import ParleyTransfer

/// The whole HTTP API in one place; it reads like the API reference (docs/api.md).
struct APIRoutes {
    let conversations: ConversationHandlers
    let messages: MessageHandlers
    let tools: ToolHandlers
    let files: FileHandlers
    let exports: ExportHandlers
    /// POST /api/import's body limit (PARLEY_MAX_IMPORT_BYTES).
    let maxImportBytes: Int
    /// POST /v1/chat/completions' body limit (PARLEY_OPENAI_MAX_BODY_BYTES): its JSON may embed files.
    let maxOpenAIBodyBytes: Int
    let events: UserEventHandlers
    let auth: AuthHandlers
    let account: AccountHandlers
    let admin: AdminHandlers
    let usage: UsageHandlers
    let preferences: PreferencesHandlers
    let openAI: OpenAIHandlers
    let authenticator: Authenticator
    /// Asked by `/api/health` what does not answer now: `store` (PostgreSQL may be down; SQLite always
    /// answers), `redis` (with several nodes); empty when all is well.
    let unavailable: @Sendable () -> [String]

    /// What a route's handler is given: the request and who sent it.
    typealias Handler = @Sendable (HTTPRequest, Caller) async throws -> HTTPResponse

    func register(in router: inout Router) {
        let authenticator = authenticator
        // Every API route takes JSON bodies only, finds its caller (401 in team mode without one),
        // and turns store and generation errors into API errors (APIErrors) on the way out. Its
        // answers, errors too, are `Cache-Control: no-store` (see `uncached`).
        func route(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
            router.on(method, pattern) { request in
                do {
                    try APIErrors.requireJSON(request)
                    return Self.uncached(try await handler(request, try authenticator.caller(for: request)))
                } catch {
                    throw Self.uncached(APIErrors.map(error))
                }
            }
        }
        /// A route anyone may call: signing in (its answer sets the session cookie: not cached either).
        func publicRoute(_ method: String, _ pattern: String, _ handler: @escaping Router.Handler) {
            router.on(method, pattern) { request in
                do {
                    try APIErrors.requireJSON(request)
                    return Self.uncached(try await handler(request))
                } catch {
                    throw Self.uncached(APIErrors.map(error))
                }
            }
        }
        /// A route of the OpenAI-compatible endpoint: found and checked like `route`, but every error is
        /// answered in OpenAI's shape (`OpenAIError`), which its clients read.
        /// `maxBodyBytes`: the route's own body limit (nil: the server's).
        func openAIRoute(_ method: String, _ pattern: String, maxBodyBytes: Int? = nil, _ handler: @escaping Handler) {
            let answer: Router.Handler = { request in
                do {
                    try APIErrors.requireJSON(request)
                    return Self.uncached(try await handler(request, try authenticator.caller(for: request)))
                } catch {
                    return Self.uncached(OpenAIError.from(error).response)
                }
            }
            if let maxBodyBytes {
                router.on(method, pattern, maxBodyBytes: maxBodyBytes, answer)
            } else {
                router.on(method, pattern, answer)
            }
        }
        /// A route whose body streams to a temp file (`UploadRoute`): `admit` runs on the headers alone,
        /// before any body byte is read, with the caller already found; its error is the answer, and the
        /// body is then discarded. `inspector` sees the body's bytes as they arrive. Errors are mapped
        /// and uncached as in `route`.
        func uploadRoute(_ method: String, _ pattern: String, maxBytes: Int, inspector: UploadRoute.Inspector? = nil,
                         admit: @escaping @Sendable (HTTPRequest, Caller) throws -> Void,
                         handler: @escaping @Sendable (HTTPRequest, UploadedBody, Caller) async throws -> HTTPResponse) {
            router.on(method, pattern, upload: UploadRoute(
                maxBytes: maxBytes,
                admit: { request in
                    do {
                        try admit(request, try authenticator.caller(for: request))
                        return nil
                    } catch {
                        return Self.uncached(APIErrors.map(error)) as? HTTPError ?? HTTPError.internal
                    }
                },
                inspector: inspector,
                handler: { request, body in
                    do {
                        return Self.uncached(try await handler(request, body, try authenticator.caller(for: request)))
                    } catch {
                        throw Self.uncached(APIErrors.map(error))
                    }
                }))
        }
        // Constant, so encoded once and answered without a task or a suspended connection; 503 naming
        // what is down while the store (PostgreSQL) or Redis does not answer, so a balancer sends no one here.
        let health = HTTPResponse.json(["status": "ok"])
        let unavailable = unavailable
        router.on("GET", "/api/health", immediate: { _ in
            let down = unavailable()
            return down.isEmpty ? health : .json(HealthDown(status: "unavailable", down: down), status: 503)
        })
        // This API described as OpenAPI 3.1 (docs/openapi.json, embedded): no caller needed, like health.
        router.on("GET", "/api/openapi.json", immediate: { _ in OpenAPIDocument.response })
        route("GET", "/api/models", messages.models)

        publicRoute("POST", "/api/auth/login", auth.login)
        route("POST", "/api/auth/logout", auth.logout)
        route("GET", "/api/auth/me", auth.me)
        route("GET", "/api/auth/sessions", account.sessions)
        route("DELETE", "/api/auth/sessions/:id", account.revokeSession)
        route("POST", "/api/auth/password", account.changePassword)

        route("POST", "/api/tokens", account.createToken)
        route("GET", "/api/tokens", account.tokens)
        route("DELETE", "/api/tokens/:id", account.revokeToken)

        // Admins only (403 for members).
        route("GET", "/api/users", admin.list)
        route("POST", "/api/users", admin.create)
        route("PATCH", "/api/users/:id", admin.update)
        route("GET", "/api/users/:id/usage", admin.usage)

        route("GET", "/api/usage", usage.report)

        // The caller's own preferences (no id: nobody reads or changes another's).
        route("GET", "/api/preferences", preferences.show)
        route("PATCH", "/api/preferences", preferences.update)

        route("POST", "/api/conversations", conversations.create)
        route("GET", "/api/conversations", conversations.list)
        route("GET", "/api/conversations/:id", conversations.show)
        route("PATCH", "/api/conversations/:id", conversations.update)
        route("DELETE", "/api/conversations/:id", conversations.delete)
        route("PUT", "/api/conversations/:id/current", conversations.switchBranch)
        route("POST", "/api/conversations/:id/fork", conversations.fork)
        route("GET", "/api/conversations/:id/export", exports.exportConversation)
        route("GET", "/api/export", exports.exportAll)
        // Import: the body streams to a temp file (it embeds attachments), declared JSON as every body.
        let exports = exports
        uploadRoute("POST", "/api/import", maxBytes: maxImportBytes,
                    admit: { request, _ in try exports.admitImport(request) },
                    handler: exports.importDocument)

        route("POST", "/api/conversations/:id/messages", messages.send)
        route("GET", "/api/messages/:id", messages.show)
        route("GET", "/api/messages/:id/stream", messages.stream)
        route("POST", "/api/messages/:id/stop", messages.stop)
        route("POST", "/api/messages/:id/regenerate", messages.regenerate)
        route("POST", "/api/messages/:id/continue", messages.continueMessage)
        route("POST", "/api/messages/:id/tool_calls/:call_id", messages.decideToolCall)
        route("GET", "/api/messages/:id/tool_calls/:call_id/content/:index", messages.toolContent)
        route("POST", "/api/messages/:id/surfaces/:surface_id/actions", messages.surfaceAction)

        // Files: the upload's body streams to a temp file; who is uploading, and their quota against the
        // declared length, are checked before any body byte is read.
        let files = files
        uploadRoute("POST", "/api/files", maxBytes: files.settings.maxFileBytes, inspector: FileHandlers.uploadInspector,
                    admit: files.admitUpload, handler: files.upload)
        route("GET", "/api/files", files.list)
        route("GET", "/api/files/:id", files.content)
        route("DELETE", "/api/files/:id", files.delete)

        route("GET", "/api/tools", tools.list)
        route("GET", "/api/tool_policies", tools.policies)
        route("DELETE", "/api/tool_policies", tools.forget)

        // OpenAI-compatible, for scripts (docs/api.md): every call is a conversation of the caller's.
        // Its own body limit: images and files may come inline as base64 (docs/api.md).
        openAIRoute("POST", "/v1/chat/completions", maxBodyBytes: maxOpenAIBodyBytes, openAI.chatCompletions)
        openAIRoute("GET", "/v1/models", openAI.models)

        route("GET", "/api/events", events.events)
    }

    // MARK: - Caching

    /// An API answer is one caller's data (or says whether they may see it): no cache keeps it, not a
    /// shared proxy's and not the browser's disk, so another person at that proxy or that computer
    /// cannot be shown it. A handler that chose its own `Cache-Control` keeps it. Event streams too:
    /// the HTTP layer sends `no-cache` only when the handler sent none.
    static func uncached(_ response: HTTPResponse) -> HTTPResponse {
        guard response.header("Cache-Control") == nil else { return response }
        var response = response
        response.headers.append(("Cache-Control", "no-store"))
        return response
    }

    /// The same for an error on its way to the HTTP layer. Anything but an `HTTPError` becomes the
    /// HTTP layer's 500, which is logged there and whose body is the same constant text for everyone.
    static func uncached(_ error: Error) -> Error {
        guard var error = error as? HTTPError else { return error }
        if !error.headers.contains(where: { $0.name.lowercased() == "cache-control" }) {
            error.headers.append(HTTPError.Header("Cache-Control", "no-store"))
        }
        return error
    }
}

/// `/api/health`'s answer while something it needs is down.
private struct HealthDown: Encodable {
    let status: String
    let down: [String]
}
