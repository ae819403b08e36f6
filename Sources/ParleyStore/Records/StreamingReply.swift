import Foundation

/// A reply whose row says `streaming`: live on some node (or on none, once that node died), with who
/// owns it and when its row was last written (its progress saves), for the cluster's stop-all and
/// takeover (`Store.streamingReplies`).
public struct StreamingReply: Sendable, Equatable {
    public let messageID: String
    public let conversationID: String
    public let ownerID: String
    public let updatedAt: Date

    public init(messageID: String, conversationID: String, ownerID: String, updatedAt: Date) {
        self.messageID = messageID
        self.conversationID = conversationID
        self.ownerID = ownerID
        self.updatedAt = updatedAt
    }
}
