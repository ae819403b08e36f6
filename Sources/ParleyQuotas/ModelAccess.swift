import ParleyAPI
import ParleyHTTP
import ParleyProviders

/// Which models a caller may use. With PARLEY_LISTED_MODELS_ONLY (team mode's default), only the
/// models `GET /api/models` lists, for everyone, admins included: a provider's unlisted models are not
/// on offer (`demo`, which sends nothing anywhere, stays usable). On top, PARLEY_MEMBER_MODELS: admins
/// (and local mode's user) every model, members the ones it names, everyone every model when it is
/// unset. `GET /api/models` shows each caller only its own; any other model answers 403
/// `model_not_allowed` before anything is sent upstream.
package struct ModelAccess: Sendable {
    /// nil: unrestricted.
    let memberModels: [String]?
    /// PARLEY_LISTED_MODELS_ONLY as in force for the mode.
    let listedOnly: Bool
    let providers: ProviderRegistry

    package init(memberModels: [String]?, listedOnly: Bool, providers: ProviderRegistry) {
        self.memberModels = memberModels
        self.listedOnly = listedOnly
        self.providers = providers
    }

    /// The models `caller` may use, in the providers' order.
    package func models(for caller: Caller) async -> [ModelInfo] {
        let all = await providers.models()
        guard isRestricted(caller) else { return all }
        return all.filter { allows($0.id) }
    }

    /// Throws 403 `model_not_allowed` unless `caller` may use `modelID` (an id `FieldRules.model`
    /// accepted: prefixed, `demo`, or a bare name one provider lists). With `listedOnly`, asks for
    /// the (cached) listing.
    package func require(_ modelID: String, for caller: Caller) async throws(HTTPError) {
        if listedOnly, !(await isListed(modelID)) {
            throw HTTPError(status: 403, code: "model_not_allowed",
                            message: "The model \(modelID) is not one this server lists (PARLEY_LISTED_MODELS_ONLY); "
                                + "GET /api/models lists yours.")
        }
        guard !isRestricted(caller) || allows(modelID) else {
            throw HTTPError(status: 403, code: "model_not_allowed",
                            message: "The model \(modelID) is not open to members (PARLEY_MEMBER_MODELS); "
                                + "GET /api/models lists yours.")
        }
    }

    /// Whether `GET /api/models` lists the model (any accepted spelling), or it is `demo`.
    private func isListed(_ modelID: String) async -> Bool {
        let id = canonical(modelID)
        guard id != DemoProvider.modelID else { return true }
        return await providers.models().contains { $0.id == id }
    }

    /// The model a reply for `caller` runs with, when it must be said explicitly: nil means "as
    /// `Generations` would choose" (the request's, else the stored one, else the server default).
    /// A requested or stored model the caller may not use is refused (403): it is never swapped
    /// silently. Only when nothing names a model and the server default is closed to the caller does
    /// the first model it may use take the default's place.
    package func replyModel(requested: String?, stored: String?, for caller: Caller) async throws -> String? {
        if let named = requested ?? stored, !named.isEmpty {
            try await require(named, for: caller)
            return requested
        }
        guard isRestricted(caller) else { return nil }
        let fallback = await providers.defaultModelID()
        if allows(fallback) { return nil }
        guard let first = await models(for: caller).first else {
            throw HTTPError(status: 403, code: "model_not_allowed",
                            message: "None of the models open to members (PARLEY_MEMBER_MODELS) is offered by this server.")
        }
        return first.id
    }

    private func isRestricted(_ caller: Caller) -> Bool {
        memberModels != nil && !caller.isAdmin
    }

    /// Whether the list names the model: its full id (`openai:llama3`, `demo`), or its bare name
    /// (`llama3`), which stands for that name at any provider.
    private func allows(_ modelID: String) -> Bool {
        guard let list = memberModels else { return true }
        let id = canonical(modelID)
        let name = ModelID.split(id).map { String($0.model) } ?? id
        return list.contains { $0 == id || (ModelID.split($0) == nil && $0 == name) }
    }

    /// `provider:model` for any accepted spelling (a bare name resolves to the provider listing it).
    private func canonical(_ modelID: String) -> String {
        guard let resolved = providers.resolve(modelID), !(resolved.provider is DemoProvider) else {
            return modelID
        }
        return ModelID.make(provider: resolved.provider.name, model: resolved.model)
    }
}
