/// What `Store.search` found, and in which order: by relevance (BM25 over the owner's own matches) when the owner's matches are
/// few enough to rank, newest first when they are not (or the query was too short for the index).
public struct SearchResults: Sendable, Equatable {
    public enum Order: String, Sendable, Equatable {
        /// BM25 of each conversation's best match, over the owner's matching rows (`SearchRanking`).
        case relevance
        /// The newest matches first: the query matched more than the ranking budget, or was shorter
        /// than a trigram.
        case newest
    }

    public let hits: [SearchHit]
    public let order: Order
    /// SQLite virtual machine steps of the MATCH: the query's work, independent of the machine's
    /// speed (issue 17's tests and bench check it does not grow with other users' text).
    public let steps: Int

    public init(hits: [SearchHit], order: Order, steps: Int = 0) {
        self.hits = hits
        self.order = order
        self.steps = steps
    }
}
