/// One page of an owner's files, newest first. Pass `nextCursor` back for the next page; nil means
/// this is the last page.
public struct FilePage: Sendable, Equatable {
    public let items: [StoredFile]
    public let nextCursor: String?

    public init(items: [StoredFile], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
