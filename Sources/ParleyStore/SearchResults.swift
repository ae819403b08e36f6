/// What `Store.search` found, and in which order: by relevance (bm25) when the owner's matches are
/// few enough to rank, newest first when they are not (or the query was too short for the index).
public struct SearchResults: Sendable, Equatable {
    public enum Order: String, Sendable, Equatable {
        /// bm25 of each conversation's best match.
        case relevance
        /// The newest matches first: the query matched more than the ranking budget, or was shorter
        /// than a trigram.
        case newest
    }

    public let hits: [SearchHit]
    public let order: Order

    public init(hits: [SearchHit], order: Order) {
        self.hits = hits
        self.order = order
    }
}
