import Foundation

extension Store {
    // MARK: - Starts that share commits

    // The writes of a start (a new conversation, a turn, a regenerated answer) as shared commits
    // (`SharedCommits`): each is the same write as its synchronous twin, in a savepoint of a
    // transaction shared with the starts that arrived beside it. It answers once that transaction has
    // committed, so a returned value means the rows are in the WAL exactly as the twin's would be; a
    // failure (a deleted conversation, an unknown parent) undoes its own changes only.

    /// `createConversation` in a shared commit.
    public func createConversationInSharedCommit(
        title: String? = nil, model: String? = nil, systemPrompt: String? = nil, ownedBy owner: String = User.localID,
        settings: GenerationSettings = GenerationSettings(), tools: [String] = []
    ) async throws(StoreError) -> Conversation {
        try await sharedWrite { (writer, now) throws(StoreError) in
            try self.createConversation(writer, now: now, title: title, model: model, systemPrompt: systemPrompt,
                                        ownedBy: owner, settings: settings, tools: tools)
        }
    }

    /// `beginTurn` in a shared commit.
    public func beginTurnInSharedCommit(
        conversationID: String, placement: TurnPlacement, userContent: String, model: String?,
        fileIDs: [String] = [], userParts: [MessagePart]? = nil
    ) async throws(StoreError) -> ReplyStart {
        try await sharedWrite { (writer, now) throws(StoreError) in
            try self.beginTurn(writer, now: now, conversationID: conversationID, placement: placement,
                               userContent: userContent, model: model, fileIDs: fileIDs, userParts: userParts)
        }
    }

    /// `beginSibling` in a shared commit.
    public func beginSiblingInSharedCommit(ofAssistant id: String, model: String?) async throws(StoreError) -> ReplyStart {
        try await sharedWrite { (writer, now) throws(StoreError) in
            try self.beginSibling(writer, now: now, ofAssistant: id, model: model)
        }
    }
}
