/// Where a message sits among its alternatives (messages with the same parent in the same
/// conversation; roots are siblings of each other), ordered by creation time then id.
public struct SiblingInfo: Sendable, Equatable {
    /// Position of the message in `ids`, from 0.
    public let index: Int
    public let count: Int
    public let ids: [String]

    public init(index: Int, count: Int, ids: [String]) {
        self.index = index
        self.count = count
        self.ids = ids
    }
}
