import ParleyStore

/// A send's fields, read and checked (its files the caller's, its model open to the caller and able to
/// see its images) and admitted by the caller's quotas before anything is written. Shared by
/// `POST /api/conversations/{id}/messages` and the first message of `POST /api/conversations`, so a
/// conversation started with its first message refuses exactly what a send refuses.
struct TurnRequest: Sendable {
    let content: String
    /// The caller's live files, in the order the model reads them.
    let files: [StoredFile]
    let placement: TurnPlacement
    /// The reply's model when the body (or the members' model list) chose one; nil: the conversation's.
    let model: String?
}
