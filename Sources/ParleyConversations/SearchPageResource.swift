import ParleyStore

/// A search answer: one page of hits in `order` (`relevance` or `newest`). `next_cursor` is always
/// null (a search answers only its first `limit` conversations); it is there so a list client reads
/// both alike.
struct SearchPageResource: Encodable {
    let items: [SearchHitResource]
    let order: SearchResults.Order

    enum CodingKeys: String, CodingKey {
        case items, order
        case nextCursor = "next_cursor"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(order.rawValue, forKey: .order)
        try container.encodeNil(forKey: .nextCursor)
    }
}
