/// A conversation's place in creation order (`Store.conversationKeys`): its creation time in
/// milliseconds and its id, which breaks ties.
public struct ExportKey: Sendable, Equatable {
    public let createdAtMilliseconds: Int64
    public let id: String

    public init(createdAtMilliseconds: Int64, id: String) {
        self.createdAtMilliseconds = createdAtMilliseconds
        self.id = id
    }
}
